// The inputs of the golden fixtures: (namespace, key) pairs whose derived
// requestIds are pinned, and command bodies whose payload fingerprints are.
// Bodies are JSON text, so a value JSON can spell but a literal cannot keep
// (-0, 9007199254740993, a lone surrogate) reaches the engine as JSON.parse
// makes it, in the generator and in every check alike.

/** Namespaces and business keys: plain, unicode, empty, long, awkward separators. */
export const requestIdInputs = [
  ["default", "order-1"],
  ["default", ""],
  ["default", " "],
  ["default", "order-1 "],
  ["tenant-a", "order-42/pay"],
  ["tenant-b", "order-42/pay"],
  ["ab", "c"],
  ["a", "bc"],
  ["", "order-1"],
  ["", ""],
  ["naïve-ns", "注文/42"],
  ["default", "🧾 receipt"],
  ["default", "e\u0301"],
  ["default", "\u00e9"],
  ["default", "nul\u0000inside"],
  ["default", "\uffff"],
  ["default", "x".repeat(1000)],
  ["user:42|tenant:7", "cart:9\u0000aggregate"],
];

/** Command shapes a fingerprint covers besides the body: the identity, the path, the expected version. */
const account = { aggregate: { resource: "account", id: "fp-account" }, action: "lock_amount" };

/** [name, command without body or key, body as JSON text]. */
export const fingerprintInputs = [
  ["integers", account, '{"a":0,"b":-1,"c":9007199254740991,"d":-9007199254740991,"e":42}'],
  ["integral-floats", account, '{"a":2.0,"b":-3.0,"c":1e2,"d":1.5e1}'],
  ["beyond-2^53", account, '{"a":9007199254740992,"b":9007199254740993,"c":-9007199254740993,"d":18446744073709551615,"e":123456789012345678901234567890}'],
  ["1e21-and-up", account, '[1e21,1e22,-1e21,1.5e300,1.7976931348623157e308,-1.7976931348623157e308]'],
  ["exponent-bounds", account, '[1e-4,9.999999999999999e-5,1e-5,1e16,9999999999999998,1e15,1000000000000000.5,1e-7,123456789.125]'],
  ["negative-zero", account, '{"z":-0,"zf":-0.0,"list":[-0,0,-0e5]}'],
  ["ties", account, '[1658206780088562.25,0.30000000000000004,0.1,0.2,0.5,2.5,5e-1,1.5e-7,3.3e-5,8.5e15]'],
  ["subnormals", account, '[5e-324,-5e-324,1e-310,2.2250738585072009e-308,2.2250738585072014e-308,4.9406564584124654e-324]'],
  ["shortest-digits", account, '[0.1,1.1,3.141592653589793,2.718281828459045,1.2345678901234567e-200,6.02214076e23,-1.602176634e-19]'],
  ["strings-and-escapes", account, '{"quote":"\\"","backslash":"\\\\","controls":"\\u0001\\u001f\\n\\t\\r\\b\\f","del":"\\u007f","separators":"\\u2028\\u2029","slash":"/"}'],
  ["unicode", account, '{"名前":"注文 🧾","é":"e\\u0301","emoji":"👩‍👩‍👧","nul":"a\\u0000b","bom":"\\ufeff","lone":"\\ud800"}'],
  ["key-order-a", account, '{"b":{"y":1,"x":[{"q":1,"p":2}]},"a":null,"c":[true,false]}'],
  ["key-order-b", account, '{"c":[true,false],"a":null,"b":{"x":[{"p":2,"q":1}],"y":1}}'],
  ["key-sorting", account, '{"\\uffff":1,"😀":2,"a":3,"A":4,"":5,"aa":6,"a\\u0000":7,"é":8,"z":9}'],
  ["empty-object", account, "{}"],
  ["empty-array", account, "[]"],
  ["null", account, "null"],
  ["scalars", account, '[true,false,null,"",0,-1.5]'],
  ["deep", account, `${"[".repeat(60)}1${"]".repeat(60)}`],
  ["long-string", account, JSON.stringify({ text: "lorem ipsum ".repeat(1000) })],
  ["identity-full", { aggregate: { resource: "account", id: "fp-1", tenantId: "t-1", ownerId: "o-1", contextAlias: "bank" },
    action: "lock_amount" }, '{"amount":1}'],
  ["identity-expected-version", { ...account, expectedVersion: 7 }, '{"amount":1}'],
  ["identity-method-and-path", { aggregate: { resource: "account", id: "fp-account" }, method: "PATCH", path: "/account/fp-account/lock_amount" },
    '{"amount":1}'],
  ["identity-create", { aggregate: { resource: "account", id: "fp-new" }, action: "create_account", create: true },
    '{"name":"n","balance":1}'],
];
