// The Review queue: dead deliveries, replayed or discarded one by one, by selection, or every one
// matching a filter as a background job.

import { addMessages, word } from './lib.js';

addMessages({ en: { review: 'Review queue' }, tr: { review: 'İnceleme kuyruğu' } });

export const reviewPage = {
  id: 'review',
  nav: 'review',
  async show(section) {
    section.replaceChildren(word('h1', 'review'));
  },
};
