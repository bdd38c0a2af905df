// The Resource timeline: every event of one resource in provider order, applied or stale and why.

import { addMessages, word } from './lib.js';

addMessages({ en: { timeline: 'Resource timeline' }, tr: { timeline: 'Nesne zaman çizelgesi' } });

export const timelinePage = {
  id: 'timeline',
  nav: 'timeline',
  async show(section) {
    section.replaceChildren(word('h1', 'timeline'));
  },
};
