/**
 * The registry's web page: search (here), an entry's page and the validate page (each loaded
 * when first visited). Rendered into <main> of the HTML the server writes (src/web).
 */
import { render } from 'preact';
import { ModuleFailed, useModule, usePageHeading } from './components';
import { config, href } from './config';
import { interceptLinks, useRoute } from './router';
import { SearchPage } from './pages/search';

function Loading() {
  return <p class="muted" role="status">Loading…</p>;
}

function EntryRoute(props: { id: string; params: URLSearchParams; moved: number }) {
  const mod = useModule(() => import('./pages/entry'));
  if (mod instanceof Error) return <ModuleFailed moved={props.moved} failure={mod} />;
  return mod ? <mod.EntryPage {...props} /> : <Loading />;
}

function ValidateRoute(props: { moved: number }) {
  const mod = useModule(() => import('./pages/validate'));
  if (mod instanceof Error) return <ModuleFailed moved={props.moved} failure={mod} />;
  return mod ? <mod.ValidatePage {...props} /> : <Loading />;
}

function App() {
  const { route, moved } = useRoute();
  // Mark the current page in the header's navigation.
  for (const link of document.querySelectorAll<HTMLAnchorElement>('[data-nav]')) {
    if (link.dataset.nav === route.page) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
  switch (route.page) {
    case 'search':
      return <SearchPage params={route.params} moved={moved} />;
    case 'entry':
      return <EntryRoute key={route.id} id={route.id} params={route.params} moved={moved} />;
    case 'validate':
      return <ValidateRoute moved={moved} />;
    default:
      return <NotFound moved={moved} />;
  }
}

/** A path the page does not know (the server answered it with status 404). */
function NotFound({ moved }: { moved: number }) {
  const heading = usePageHeading(`Page not found · ${config.name}`, moved);
  return (
    <section>
      <h1 ref={heading} tabIndex={-1}>
        Page not found
      </h1>
      <p>
        There is no page at <code class="url">{window.location.pathname}</code>. <a href={href('/')}>Search the registry</a>, or{' '}
        <a href={href('/validate')}>validate and register a card</a>.
      </p>
    </section>
  );
}

const main = document.getElementById('main');
if (main) {
  main.textContent = '';
  interceptLinks();
  render(<App />, main);
}
