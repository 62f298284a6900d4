/** A JSON Schema object, as the zod transform writes a route's body schema. */
type Schema = { [keyword: string]: unknown };

/** A member that names an object's prototype: a body holding one is a 400 whatever else it holds. */
const noProtoMember = { not: { const: '__proto__' } } as const;
/** Guarded by `type`, so it holds for every value that is not an object. */
const noConstructorPrototype = {
  not: { type: 'object', required: ['constructor'], properties: { constructor: { type: 'object', required: ['prototype'] } } },
} as const;

/** Where a body schema takes any value: any JSON value, with the rule on every object at any depth in it. */
const anyJsonValueName = 'JsonValue';
const anyJsonValueRef = `#/components/schemas/${anyJsonValueName}`;
const anyJsonValue: Schema = {
  description: 'Any JSON value, but an object at any depth in it has no `__proto__` member and no `constructor` member that is an object with a `prototype` member',
  anyOf: [
    { type: ['null', 'boolean', 'number', 'string'] },
    { type: 'array', items: { $ref: anyJsonValueRef } },
    { type: 'object', additionalProperties: { $ref: anyJsonValueRef }, propertyNames: noProtoMember, ...noConstructorPrototype },
  ],
};

type MediaTypes = Record<string, { schema?: unknown }>;
type Operations = Record<string, { requestBody?: { content?: MediaTypes } } | undefined>;

/**
 * What the server refuses in every JSON body (json-body.ts in @tessera/http: fastify's poisoning
 * protection, answered 400 naming the field), said in the body schemas so that a client, and a
 * fuzzer drawing valid bodies from them, knows it: at every object level, no member named
 * `__proto__`, and no member named `constructor` that is an object with a `prototype` member
 * (other `constructor` members are taken where a schema takes them). Done once over the whole
 * document rather than route by route, so a new route's body has the rule without asking.
 */
export function refusePrototypeMembersInBodies(openapiObject: { paths?: object; components?: object }): void {
  let anyValueUsed = false;
  const useAnyValue = () => {
    anyValueUsed = true;
    return anyJsonValueRef;
  };
  for (const operations of Object.values((openapiObject.paths ?? {}) as Record<string, Operations>)) {
    for (const operation of Object.values(operations)) {
      const content = typeof operation === 'object' && operation !== null ? operation.requestBody?.content : undefined;
      for (const [mediaType, media] of Object.entries(content ?? {})) {
        if (isJson(mediaType) && media.schema !== undefined) media.schema = withRule(media.schema, useAnyValue);
      }
    }
  }
  if (!anyValueUsed) return;
  const components = (openapiObject.components ??= {}) as { schemas?: Record<string, unknown> };
  components.schemas = { ...components.schemas, [anyJsonValueName]: anyJsonValue };
}

const isJson = (mediaType: string) => /^application\/(?:[\w.+-]+\+)?json$/i.test(mediaType.split(';')[0]!.trim());

/** Subschemas that describe (part of) the same value or its members; `not` and `if` are left alone: narrowing what they test would widen or change the schema. */
const inPlace = ['allOf', 'anyOf', 'oneOf', 'then', 'else'] as const;
const members = ['additionalProperties', 'unevaluatedProperties', 'items', 'unevaluatedItems'] as const;
const memberMaps = ['properties', 'patternProperties', 'dependentSchemas'] as const;
/** Keywords that say nothing of what a value may be. */
const annotations = new Set(['title', 'description', 'default', 'examples', 'deprecated', 'readOnly', 'writeOnly', '$comment']);

function withRule(schema: unknown, anyValue: () => string): unknown {
  if (schema === true) return { $ref: anyValue() };
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return schema;
  const node: Schema = { ...(schema as Schema) };
  if (Object.keys(node).every((keyword) => annotations.has(keyword))) return { ...node, $ref: anyValue() };
  for (const keyword of inPlace) node[keyword] = mapped(node[keyword], anyValue);
  for (const keyword of members) node[keyword] = mapped(node[keyword], anyValue);
  node.prefixItems = mapped(node.prefixItems, anyValue);
  for (const keyword of memberMaps) {
    const map = node[keyword];
    if (typeof map === 'object' && map !== null) node[keyword] = Object.fromEntries(Object.entries(map).map(([name, member]) => [name, withRule(member, anyValue)]));
  }
  for (const keyword of Object.keys(node)) if (node[keyword] === undefined) delete node[keyword];
  if (!describesObjects(node)) return node;
  const { propertyNames } = node;
  if (propertyNames === undefined || propertyNames === true) node.propertyNames = noProtoMember;
  else if (typeof propertyNames === 'object' && propertyNames !== null) node.propertyNames = addKeyword(propertyNames as Schema, noProtoMember);
  return addKeyword(node, noConstructorPrototype);
}

function mapped(value: unknown, anyValue: () => string): unknown {
  if (value === undefined) return undefined;
  return Array.isArray(value) ? value.map((schema) => withRule(schema, anyValue)) : withRule(value, anyValue);
}

function describesObjects(node: Schema): boolean {
  const { type } = node;
  if (type === 'object' || (Array.isArray(type) && type.includes('object'))) return true;
  return type === undefined && ['properties', 'patternProperties', 'additionalProperties', 'propertyNames', 'required'].some((keyword) => keyword in node);
}

/** Adds one keyword's constraint beside the schema's own: in place when it has none, else under `allOf`. */
function addKeyword(schema: Schema, constraint: { readonly not: object }): Schema {
  if (!('not' in schema)) return { ...schema, ...constraint };
  const allOf = Array.isArray(schema.allOf) ? schema.allOf : [];
  return { ...schema, allOf: [...allOf, constraint] };
}
