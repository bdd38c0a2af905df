// The panel's shared words in English and Turkish (each page adds its own with addMessages). Keys are
// the English text's meaning, not the text itself.
export const messages = {
  en: {
    signIn: 'Sign in', token: 'Token', signOut: 'Sign out', wrongToken: 'Wrong token.',
    apply: 'Apply', clear: 'Clear', cancel: 'Cancel', confirm: 'Confirm',
  },
  tr: {
    signIn: 'Giriş yap', token: 'Erişim anahtarı', signOut: 'Çıkış', wrongToken: 'Yanlış anahtar.',
    apply: 'Uygula', clear: 'Temizle', cancel: 'İptal', confirm: 'Onayla',
  },
};

/** The browser's language when the panel speaks it, else English. */
export function browserLanguage() {
  return (navigator.languages ?? [navigator.language]).some((l) => l?.toLowerCase().startsWith('tr')) ? 'tr' : 'en';
}
