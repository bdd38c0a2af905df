import { isSecretHeader } from '../signing/common.js';
import { locatorBodyKind } from '../signing/request-fields.js';
import { schemeBodies, type LocatorSpec, type SchemeName } from '../signing/types.js';

/** The parts of a source that name locators, as configuration has them after parsing. */
interface SourceLocators {
  scheme: SchemeName;
  hmac?: { signature?: string | undefined } | undefined;
  event_id?: readonly LocatorSpec[] | undefined;
  resource_id?: readonly LocatorSpec[] | undefined;
  event_type?: readonly string[] | undefined;
  occurred_at?: readonly string[] | undefined;
  ordering?: { state?: string | undefined } | undefined;
}

/**
 * The body a source receives: its scheme's, or for a generic `hmac` source whose signature is a
 * form field (or a JSON path) that kind of body, since the signature could not be read from another.
 */
function sourceBody(s: SourceLocators): { kind: 'json' | 'form'; why: string } | undefined {
  const kind = schemeBodies[s.scheme];
  if (kind !== 'any') return { kind, why: `scheme "${s.scheme}" receives ${kind === 'form' ? 'a form' : 'a JSON body'}` };
  const signature = s.hmac?.signature;
  const signed = signature === undefined ? null : locatorBodyKind(signature);
  if (signed === null) return undefined;
  return { kind: signed, why: `the signature is read from ${signature}, so the body is ${signed === 'form' ? 'a form' : 'JSON'}` };
}

/**
 * Locators that can never find anything, with the key that names them: `body:` in a form, `form:` in
 * JSON, a credential header as the ordering guard's state. Loading refuses them rather than leave an
 * id, a type or the guard's state silently empty.
 */
export function locatorBodyProblems(s: SourceLocators): Array<{ path: (string | number)[]; message: string }> {
  const problems: Array<{ path: (string | number)[]; message: string }> = [];
  // The guard reads its state from the stored delivery, and a credential header is never stored.
  const state = s.ordering?.state;
  if (state?.startsWith('header:') && isSecretHeader(state.slice('header:'.length))) {
    problems.push({
      path: ['ordering', 'state'],
      message: `"${state}" can never find a value: its name looks like a credential, so the header is not stored with the delivery the ordering guard reads`,
    });
  }
  const body = sourceBody(s);
  if (!body) return problems;
  const named: Array<[(string | number)[], readonly LocatorSpec[] | undefined]> = [
    [['event_id'], s.event_id],
    [['resource_id'], s.resource_id],
    [['event_type'], s.event_type],
    [['occurred_at'], s.occurred_at],
    [['ordering', 'state'], s.ordering?.state === undefined ? undefined : [s.ordering.state]],
  ];
  for (const [path, specs] of named) {
    for (const spec of specs ?? []) {
      for (const locator of typeof spec === 'string' ? [spec] : spec.all) {
        const kind = locatorBodyKind(locator);
        if (kind === null || kind === body.kind) continue;
        const instead =
          body.kind === 'form'
            ? `a form has no JSON; read a field with "form:${locator.slice('body:'.length)}"`
            : `a JSON body has no form fields; read a value with "body:<dotted.path>"`;
        problems.push({ path, message: `"${locator}" can never find a value: ${body.why}, and ${instead} (or a header with "header:<name>")` });
      }
    }
  }
  return problems;
}
