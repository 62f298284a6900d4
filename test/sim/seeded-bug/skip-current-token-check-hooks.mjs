// A seeded bug, for the simulation's test that the history checker catches one: the revoke a
// region decides away from home skips the check that the presented refresh token is the family's
// current one (its keyed hash is never compared). Applied to the compiled domain package as it
// loads, so the product's sources stay as they are. A load that finds nothing to change fails, so
// a change to that check cannot silently turn this test into one that cannot fail.
const target = /\/domain\/dist\/remote-revocation\.js$/;
const check = '!presentedMatches(current, presented)';

export async function load(url, context, nextLoad) {
  const loaded = await nextLoad(url, context);
  if (!target.test(url)) return loaded;
  const source = String(loaded.source);
  if (!source.includes(check)) throw new Error(`the seeded bug found no current-token check to skip in ${url}`);
  return { ...loaded, source: source.replace(check, 'false') };
}
