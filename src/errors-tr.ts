import { errorCatalogue, type ErrorCode, type TekilError } from './errors.js';

/**
 * The catalogue's messages in Turkish, one for every code (the type and a test keep the two key sets
 * equal): what the API answers a caller that asks for Turkish with `Accept-Language: tr`, as the
 * merchant portal does when its language is Turkish (docs/errors.md).
 */
export const errorMessagesTr = {
  SOURCE_NOT_FOUND: 'böyle bir kaynak tanımlı değil',
  BODY_TOO_LARGE: 'istek gövdesi boyut sınırını aşıyor',
  SIGNATURE_MISSING: 'istekte imza yok',
  SIGNATURE_MALFORMED: 'imza başlığı okunamıyor',
  SIGNATURE_INVALID: 'hiçbir imza etkin anahtarlardan biriyle eşleşmiyor',
  TIMESTAMP_MISSING: 'imzalı zaman damgası eksik',
  TIMESTAMP_MALFORMED: 'imzalı zaman damgası saniye cinsinden bir sayı değil',
  TIMESTAMP_OUT_OF_TOLERANCE: 'imzalı zaman damgası izin verilen aralığın dışında',
  EVENT_ID_MISSING: 'olay kimliği eksik',
  EVENT_ID_INVALID: 'olay kimliği kullanılamıyor',
  BODY_NOT_JSON: 'gövde geçerli bir JSON değil',
  STORE_UNAVAILABLE: 'veri deposuna şu an ulaşılamıyor, biraz sonra yeniden deneyin',
  STORE_REJECTED: 'veri deposu yazmayı reddetti',
  OVERLOADED: 'işlenen iş çok fazla, biraz sonra yeniden deneyin',
  ACK_DEADLINE_EXCEEDED: 'bildirim, onay süresi içinde kaydedilemedi; biraz sonra yeniden deneyin',
  SHUTTING_DOWN: 'tekil kapanıyor, biraz sonra yeniden deneyin',
  UNSUPPORTED_MEDIA_TYPE: 'bu içerik türü burada kabul edilmiyor',
  REQUEST_MALFORMED: 'istek hatalı biçimde',
  BODY_TOO_DEEP: 'JSON gövdesi izin verilenden daha derin iç içe',
  URL_TOO_LONG: 'adresin bir parçası çok uzun',
  HEADERS_TOO_LARGE: 'istek başlıkları boyut sınırını aşıyor',
  REQUEST_TIMEOUT: 'istek zamanında alınamadı',
  UNAUTHORIZED: 'oturum yok ya da erişim anahtarı yanlış',
  FORBIDDEN: 'yetkiniz bu işlem için yeterli değil',
  SIGN_IN_LIMITED: 'bu adresten ya da anahtarla çok fazla başarısız giriş denendi, biraz sonra yeniden deneyin',
  NOT_FOUND: 'bulunamadı',
  TENANT_NOT_FOUND: 'böyle bir üye işyeri yok',
  PORTAL_LINK_GONE: 'portal bağlantısı daha önce kullanılmış, süresi dolmuş ya da hiç yok',
  CONFIRMATION_REQUIRED: 'bu işlem veri siler ve onaylanması gerekir',
  CONFLICT: 'değişiklik, kaydın şimdiki durumuyla çelişiyor',
  BODY_TRIMMED: 'içerik saklama süresi dolduğu için silindi; yeniden gönderilecek bir şey kalmadı',
  VALIDATION_FAILED: 'girilen değer geçerli değil',
  IDEMPOTENCY_KEY_REUSED: 'bu Idempotency-Key daha önce başka bir istekle kullanıldı',
  TENANT_LIMIT_EXCEEDED: 'değer, sağlayıcının üye işyerlerine izin verdiği sınırın dışında',
  FORBIDDEN_DESTINATION: 'hedef adres özel, yerel (loopback) ya da link-local bir ağda',
  QUOTA_EXCEEDED: 'üye işyeri bunlardan kotasının izin verdiği kadarına zaten sahip',
  TOO_MANY_STREAMS: 'bu üye işyeri, anahtar ya da adres için açık canlı akış sayısı çok fazla',
  SECRET_KEY_MISMATCH: 'kayıtlı anahtarlar başka bir gizli anahtarla şifrelenmiş',
  SERVER_UNREACHABLE: 'tekil sunucusuna ulaşılamıyor',
  PROVE_EFFECTS_UNREACHABLE: 'alıcının etkiler adresi okunamıyor',
  PROVE_EFFECTS_INVALID: 'alıcının etkileri, etkiler sözleşmesine uymuyor',
  PROVE_CONTROL_FAILED: 'alıcının kontrol adresi bir çağrıyı kabul etmedi',
  HANDLER_TIMEOUT: 'işleyici worker.handler_timeout süresi içinde bitmedi',
  RECONCILE_NOT_CONFIGURED: 'kaynağın mutabakat (reconcile) ayarı yok',
  RECONCILE_PROVIDER_FAILED: 'sağlayıcının API’si okunamadı',
  RECONCILE_RUNNING: 'bu kaynağın bir mutabakat çalışması sürüyor',
  SIMULATION_UNSETTLED: 'benzetimdeki bildirimler zamanında sonuçlanmadı',
  CONFIG_INVALID: 'yapılandırma geçerli değil',
  CONFIG_NOT_FOUND: 'yapılandırma dosyası okunamıyor',
  INVALID_IDENTIFIER: 'bir ad geçerli bir SQL tanımlayıcısı değil',
  MIGRATION_FAILED: 'bir veritabanı geçişi (migration) başarısız oldu',
  PROCESSES_NEED_POSTGRES: 'gömülü veri deposu tek süreçlidir: 1’den büyük --processes için PostgreSQL gerekir',
  PORT_UNAVAILABLE: 'tekil’in dinlemesi istenen port kullanılamıyor',
  ADMIN_TOKEN_NOT_FOUND: 'henüz bir yönetici anahtarı oluşturulmamış ya da ayarlanmamış',
  PROCESS_CRASH_LOOP: 'bir tekil süreci başladıktan kısa süre sonra çökmeye devam etti; gözetmen vazgeçti',
  LEASE_LOST: 'bu işin kiralaması başka bir sürece geçti',
  AMOUNT_MISMATCH: 'sağlayıcının bildirdiği tutar bildirimdekinden farklı',
  CURRENCY_MISMATCH: 'sağlayıcının bildirdiği para birimi bildirimdekinden farklı',
  STATUS_MISMATCH: 'sağlayıcının bildirdiği ödeme durumu bildirimdekinden farklı',
  PAYMENT_ID_MISSING: 'bildirimde sağlayıcıya sorulacak bir ödeme kimliği yok',
  PAYMENT_LOOKUP_FAILED: 'sağlayıcının ödeme sorgusu okunamadı',
  JWKS_UNAVAILABLE: 'kaynağın açık anahtar belgesi (JWKS) henüz okunamadı; biraz sonra yeniden deneyin',
  ERASED: 'bu kaydın gövdesi istek üzerine silindi (kişisel veri); yeniden işlenemez ya da gönderilemez',
  EVENT_SCHEMA_MISMATCH: 'mesajın verisi olay türünün şemasına uymuyor',
  EVENT_TYPE_UNDECLARED: 'bu olay türü katalogda tanımlı değil',
  INTERNAL: 'iç hata',
} as const satisfies Record<ErrorCode, string>;

/** The languages the API answers in; English unless the caller asks for Turkish. */
export type ErrorLanguage = 'en' | 'tr';

/**
 * The caller's language from its Accept-Language header: Turkish when the first language it names is
 * Turkish (`tr`, `tr-TR`, with or without a quality), else English. Only the first is read: a browser
 * in English that also accepts Turkish keeps English.
 */
export function errorLanguage(acceptLanguage: string | string[] | undefined): ErrorLanguage {
  const header = Array.isArray(acceptLanguage) ? acceptLanguage[0] : acceptLanguage;
  const first = header
    ?.split(',')
    .map((part) => {
      const [tag = '', ...params] = part.trim().split(';');
      const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
      return { tag: tag.toLowerCase(), q: q ? Number(q.slice(2)) : 1 };
    })
    .filter((l) => l.tag !== '' && l.q > 0)
    .sort((a, b) => b.q - a.q)[0];
  return first && (first.tag === 'tr' || first.tag.startsWith('tr-')) ? 'tr' : 'en';
}

/**
 * A refusal's answer in the language: in Turkish, the code's Turkish message, and the English message
 * as `detail` when it says more than the code's default (the field that failed, the limit).
 */
export function errorBody(error: TekilError, language: ErrorLanguage): ReturnType<TekilError['toJSON']> & { detail?: string } {
  const body = error.toJSON();
  if (language === 'en') return body;
  const detail = error.message !== errorCatalogue[error.code].message ? error.message : undefined;
  return { ...body, message: errorMessagesTr[error.code], ...(detail === undefined ? {} : { detail }) };
}
