/**
 * Word lists for generated registry entries: a few hundred real words across business domains,
 * in English, German, Spanish, Italian and Indonesian (with their accents), so generated cards
 * exercise accent folding and multilingual matching the way real registrations do.
 */

export type Lang = 'en' | 'de' | 'es' | 'it' | 'id';

export const LANGS: readonly Lang[] = ['en', 'de', 'es', 'it', 'id'];

export interface LocalWords {
  nouns: string[];
  verbs: string[];
}

export interface Domain {
  key: string;
  /** Tags are mostly English, as they are on real cards. */
  tags: string[];
  words: Record<Lang, LocalWords>;
  /** English verb + noun pairs that make natural tool names (`get_forecast`). */
  toolVerbs: string[];
  toolNouns: string[];
}

const d = (
  key: string,
  tags: string,
  en: [string, string],
  de: [string, string],
  es: [string, string],
  it: [string, string],
  id: [string, string],
  toolVerbs: string,
  toolNouns: string,
): Domain => {
  const w = (p: [string, string]): LocalWords => ({ nouns: p[0].split(','), verbs: p[1].split(',') });
  return {
    key,
    tags: tags.split(','),
    words: { en: w(en), de: w(de), es: w(es), it: w(it), id: w(id) },
    toolVerbs: toolVerbs.split(','),
    toolNouns: toolNouns.split(','),
  };
};

export const DOMAINS: readonly Domain[] = [
  d('weather', 'weather,forecast,climate,meteo,outdoor',
    ['weather,forecast,temperature,rain,wind,storm,humidity,climate,alert,radar', 'forecast,check,monitor,predict,alert'],
    ['Wetter,Vorhersage,Temperatur,Regen,Unwetter,Luftfeuchtigkeit', 'vorhersagen,prüfen,melden'],
    ['clima,pronóstico,temperatura,lluvia,tormenta,viento', 'consultar,predecir,avisar'],
    ['meteo,previsione,temperatura,pioggia,temporale,città', 'prevedere,controllare,avvisare'],
    ['cuaca,prakiraan,suhu,hujan,badai,angin', 'memeriksa,memprediksi,memantau'],
    'get,fetch,list,subscribe', 'forecast,weather,alerts,radar,temperature'),
  d('travel', 'travel,booking,flights,hotels,tourism',
    ['flight,hotel,booking,trip,itinerary,airport,ticket,train,visa,luggage', 'book,plan,search,cancel,compare'],
    ['Flug,Reise,Buchung,Hotel,Fahrkarte,Gepäck', 'buchen,planen,stornieren'],
    ['vuelo,viaje,reserva,hotel,billete,equipaje', 'reservar,planificar,cancelar'],
    ['volo,viaggio,prenotazione,albergo,biglietto,bagaglio', 'prenotare,pianificare,cancellare'],
    ['penerbangan,perjalanan,pemesanan,hotel,tiket,bagasi', 'memesan,merencanakan,membatalkan'],
    'search,book,cancel,get,list', 'flights,hotels,booking,itinerary,trains'),
  d('finance', 'finance,payments,banking,accounting,invoices',
    ['invoice,payment,transfer,account,balance,budget,expense,tax,currency,loan', 'pay,transfer,reconcile,audit,calculate'],
    ['Überweisung,Rechnung,Zahlung,Konto,Steuer,Währung', 'überweisen,bezahlen,prüfen'],
    ['factura,pago,transferencia,cuenta,impuesto,presupuesto', 'pagar,transferir,calcular'],
    ['fattura,pagamento,bonifico,conto,tasse,bilancio', 'pagare,calcolare,verificare'],
    ['tagihan,pembayaran,transfer,rekening,pajak,anggaran', 'membayar,menghitung,mentransfer'],
    'create,get,list,pay,convert,reconcile', 'invoice,payment,balance,transactions,exchange_rate'),
  d('translation', 'translation,language,localization,nlp,i18n',
    ['translation,language,text,glossary,subtitle,dictionary,grammar,locale,phrase,document', 'translate,localize,detect,proofread,transcribe'],
    ['Übersetzung,Sprache,Wörterbuch,Untertitel,Grammatik', 'übersetzen,korrigieren,erkennen'],
    ['traducción,idioma,diccionario,subtítulo,gramática', 'traducir,corregir,detectar'],
    ['traduzione,lingua,dizionario,sottotitoli,grammatica', 'tradurre,correggere,rilevare'],
    ['terjemahan,bahasa,kamus,subtitel,tata bahasa', 'menerjemahkan,memeriksa,mendeteksi'],
    'translate,detect,list,get', 'text,language,languages,glossary,document'),
  d('documents', 'documents,pdf,office,ocr,files',
    ['document,pdf,spreadsheet,report,contract,form,signature,template,archive,scan', 'summarize,extract,convert,sign,generate'],
    ['Dokument,Bericht,Vertrag,Formular,Unterschrift,Vorlage', 'zusammenfassen,erstellen,unterschreiben'],
    ['documento,informe,contrato,formulario,firma,plantilla', 'resumir,extraer,firmar'],
    ['documento,rapporto,contratto,modulo,firma,modello', 'riassumere,estrarre,firmare'],
    ['dokumen,laporan,kontrak,formulir,tanda tangan,templat', 'meringkas,mengekstrak,menandatangani'],
    'read,write,convert,extract,summarize', 'pdf,document,file,spreadsheet,text'),
  d('code', 'code,devops,github,ci,developer',
    ['repository,commit,pull request,issue,pipeline,deployment,build,test,branch,container', 'review,deploy,build,lint,refactor'],
    ['Quellcode,Bereitstellung,Fehler,Prüfung,Zweig', 'bereitstellen,testen,überprüfen'],
    ['repositorio,despliegue,error,prueba,rama', 'desplegar,probar,revisar'],
    ['repository,rilascio,errore,verifica,ramo', 'rilasciare,testare,revisionare'],
    ['repositori,penerapan,galat,pengujian,cabang', 'menerapkan,menguji,meninjau'],
    'create,list,get,merge,run,search', 'issue,pull_request,commit,workflow,repository,branch'),
  d('health', 'health,medical,fitness,wellness,clinic',
    ['appointment,patient,symptom,prescription,doctor,clinic,nutrition,workout,sleep,vaccine', 'diagnose,schedule,track,remind,recommend'],
    ['Termin,Patient,Symptom,Rezept,Arzt,Ernährung', 'vereinbaren,erinnern,empfehlen'],
    ['cita,paciente,síntoma,receta,médico,nutrición', 'programar,recordar,recomendar'],
    ['appuntamento,paziente,sintomo,ricetta,medico,nutrizione', 'prenotare,ricordare,consigliare'],
    ['janji temu,pasien,gejala,resep,dokter,gizi', 'menjadwalkan,mengingatkan,merekomendasikan'],
    'get,create,list,track', 'appointment,patient,symptoms,medication,workout'),
  d('commerce', 'ecommerce,shopping,retail,orders,inventory',
    ['order,product,cart,inventory,shipment,refund,catalog,price,discount,customer', 'buy,ship,refund,restock,recommend'],
    ['Bestellung,Produkt,Warenkorb,Lieferung,Rückerstattung,Kunde', 'bestellen,liefern,erstatten'],
    ['pedido,producto,carrito,envío,reembolso,cliente', 'comprar,enviar,reembolsar'],
    ['ordine,prodotto,carrello,spedizione,rimborso,cliente', 'comprare,spedire,rimborsare'],
    ['pesanan,produk,keranjang,pengiriman,pengembalian dana,pelanggan', 'membeli,mengirim,mengembalikan'],
    'get,list,create,update,cancel,track', 'order,product,inventory,shipment,customer,cart'),
  d('people', 'hr,recruiting,payroll,people,onboarding',
    ['employee,candidate,interview,salary,payroll,vacation,onboarding,resume,job,team', 'hire,interview,onboard,approve,evaluate'],
    ['Mitarbeiter,Bewerber,Vorstellungsgespräch,Gehalt,Urlaub,Lebenslauf', 'einstellen,genehmigen,bewerten'],
    ['empleado,candidato,entrevista,salario,vacaciones,currículum', 'contratar,aprobar,evaluar'],
    ['dipendente,candidato,colloquio,stipendio,ferie,curriculum', 'assumere,approvare,valutare'],
    ['karyawan,kandidat,wawancara,gaji,cuti,lamaran', 'merekrut,menyetujui,menilai'],
    'list,get,create,approve,schedule', 'employee,candidate,interview,payroll,leave_request'),
  d('legal', 'legal,compliance,contracts,privacy,gdpr',
    ['contract,clause,compliance,regulation,privacy,policy,lawsuit,trademark,patent,agreement', 'review,draft,comply,negotiate,redact'],
    ['Vertrag,Klausel,Datenschutz,Vorschrift,Klage,Marke', 'prüfen,entwerfen,schwärzen'],
    ['contrato,cláusula,privacidad,normativa,demanda,marca', 'revisar,redactar,negociar'],
    ['contratto,clausola,privacy,normativa,causa,marchio', 'rivedere,redigere,negoziare'],
    ['kontrak,klausul,privasi,peraturan,gugatan,merek dagang', 'meninjau,menyusun,menegosiasikan'],
    'review,search,get,redact', 'contract,clause,policy,case,regulation'),
  d('analytics', 'analytics,data,sql,dashboard,metrics',
    ['dashboard,metric,query,dataset,chart,forecast,anomaly,table,warehouse,kpi', 'analyze,visualize,aggregate,query,predict'],
    ['Auswertung,Kennzahl,Abfrage,Datensatz,Diagramm,Tabelle', 'analysieren,auswerten,darstellen'],
    ['análisis,métrica,consulta,conjunto de datos,gráfico,tabla', 'analizar,visualizar,consultar'],
    ['analisi,metrica,interrogazione,dati,grafico,tabella', 'analizzare,visualizzare,interrogare'],
    ['analisis,metrik,kueri,kumpulan data,grafik,tabel', 'menganalisis,memvisualisasikan,mengueri'],
    'run,query,list,describe,create', 'query,table,dashboard,metric,chart,dataset'),
  d('media', 'image,video,audio,media,generation',
    ['image,photo,video,audio,podcast,thumbnail,caption,music,voice,illustration', 'generate,edit,resize,transcribe,caption'],
    ['Bild,Foto,Video,Musik,Stimme,Untertitel', 'bearbeiten,erzeugen,beschriften'],
    ['imagen,foto,vídeo,música,voz,ilustración', 'generar,editar,describir'],
    ['immagine,foto,video,musica,voce,illustrazione', 'generare,modificare,descrivere'],
    ['gambar,foto,video,musik,suara,ilustrasi', 'membuat,mengedit,menjelaskan'],
    'generate,edit,resize,transcribe,upload', 'image,video,audio,thumbnail,caption'),
  d('maps', 'maps,geolocation,routing,places,navigation',
    ['map,route,address,location,place,distance,traffic,direction,restaurant,parking', 'navigate,geocode,locate,route,explore'],
    ['Karte,Route,Adresse,Standort,Straße,Verkehr', 'navigieren,finden,berechnen'],
    ['mapa,ruta,dirección,ubicación,calle,tráfico', 'navegar,localizar,calcular'],
    ['mappa,percorso,indirizzo,posizione,strada,traffico', 'navigare,localizzare,calcolare'],
    ['peta,rute,alamat,lokasi,jalan,lalu lintas', 'menavigasi,menemukan,menghitung'],
    'geocode,search,get,route', 'places,directions,address,distance_matrix,location'),
  d('communication', 'email,calendar,chat,messaging,productivity',
    ['email,meeting,calendar,message,reminder,contact,inbox,notification,channel,schedule', 'send,schedule,reply,notify,organize'],
    ['E-Mail,Besprechung,Kalender,Nachricht,Erinnerung,Kontakt', 'senden,planen,antworten'],
    ['correo,reunión,calendario,mensaje,recordatorio,contacto', 'enviar,agendar,responder'],
    ['posta,riunione,calendario,messaggio,promemoria,contatto', 'inviare,programmare,rispondere'],
    ['surel,rapat,kalender,pesan,pengingat,kontak', 'mengirim,menjadwalkan,membalas'],
    'send,list,create,get,search', 'email,event,message,calendar,contact,channel'),
  d('security', 'security,identity,auth,vulnerability,monitoring',
    ['vulnerability,password,certificate,firewall,incident,threat,login,token,audit,malware', 'scan,detect,rotate,block,investigate'],
    ['Sicherheitslücke,Passwort,Zertifikat,Bedrohung,Vorfall,Anmeldung', 'scannen,erkennen,blockieren'],
    ['vulnerabilidad,contraseña,certificado,amenaza,incidente,acceso', 'escanear,detectar,bloquear'],
    ['vulnerabilità,password,certificato,minaccia,incidente,accesso', 'scansionare,rilevare,bloccare'],
    ['kerentanan,kata sandi,sertifikat,ancaman,insiden,masuk', 'memindai,mendeteksi,memblokir'],
    'scan,list,get,rotate,block', 'vulnerabilities,secrets,certificates,alerts,findings'),
];

/** Who an agent is for, per language. */
export const AUDIENCES: Record<Lang, string[]> = {
  en: ['small businesses', 'developers', 'travellers', 'students', 'enterprise teams', 'families'],
  de: ['kleine Unternehmen', 'Entwickler', 'Reisende', 'Studierende', 'Familien'],
  es: ['pequeñas empresas', 'desarrolladores', 'viajeros', 'estudiantes', 'familias'],
  it: ['piccole imprese', 'sviluppatori', 'viaggiatori', 'studenti', 'famiglie'],
  id: ['usaha kecil', 'pengembang', 'wisatawan', 'mahasiswa', 'keluarga'],
};

export const ORGANIZATIONS = [
  'Acme Corp', 'Globex', 'Initech', 'Umbrella Labs', 'Stark Industries', 'Wayne Enterprises', 'Hooli', 'Soylent',
  'Müller GmbH', 'Telefónica Digital', 'Ferrari Servizi', 'Nusantara Teknologi', 'Zürich Data AG', 'Ñandú Software',
];

export const MODES = [
  'text/plain', 'application/json', 'text/markdown', 'text/html', 'image/png', 'image/jpeg', 'application/pdf',
  'audio/mpeg', 'video/mp4', 'text/csv', 'text/*', 'image/*', 'application/octet-stream',
];
