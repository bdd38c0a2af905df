import { describe, expect, it } from 'vitest';
import { rawJsonValue } from './raw-json.js';
import { parsePath } from './json-path.js';

const at = (text: string, dotted: string) => {
  JSON.parse(text); // the scanner's precondition
  return rawJsonValue(text, parsePath(dotted));
};

describe('raw JSON values', () => {
  it('returns numbers exactly as written', () => {
    expect(at('{"event_id": 17960923835832100001}', 'event_id')).toBe('17960923835832100001');
    expect(at('{"a":1e3,"b":1.50,"c":-0,"d":1E+3}', 'a')).toBe('1e3');
    expect(at('{"a":1e3,"b":1.50,"c":-0,"d":1E+3}', 'b')).toBe('1.50');
    expect(at('{"a":1e3,"b":1.50,"c":-0,"d":1E+3}', 'c')).toBe('-0');
    expect(at('{"a":1e3,"b":1.50,"c":-0,"d":1E+3}', 'd')).toBe('1E+3');
  });

  it('walks nested objects and arrays, past strings holding brackets, quotes and commas', () => {
    const text = ' { "s": "a}\\"],{" , "x": [ {"id": 1}, { "id" : 20000000000000000002 } ], "data": {"n": {"v": [true, null]}, "id": 7 } } ';
    expect(at(text, 'x.1.id')).toBe('20000000000000000002');
    expect(at(text, 'x.0.id')).toBe('1');
    expect(at(text, 'data.id')).toBe('7');
    expect(at(text, 'data.n')).toBe('{"v": [true, null]}');
    expect(at(text, 's')).toBe('"a}\\"],{"');
  });

  it('matches escaped keys by their decoded name, takes the last duplicate, and finds nothing where nothing is', () => {
    expect(at('{"ev\\u0065nt_id": 5}', 'event_id')).toBe('5');
    expect(at('{"id": 1, "id": 2}', 'id')).toBe('2');
    expect(at('{"a": {}}', 'a.b')).toBeUndefined();
    expect(at('{"a": []}', 'a.0')).toBeUndefined();
    expect(at('{"a": [1]}', 'a.1')).toBeUndefined();
    expect(at('{"a": [1]}', 'a.x')).toBeUndefined();
    expect(at('[1, 2]', '1')).toBe('2');
    expect(at('"text"', 'a')).toBeUndefined();
  });
});
