// Encrypts secrets at rest with AES-256-GCM (WebCrypto). The key comes from a Worker secret; each
// value gets a fresh 96-bit IV, and the additional data binds a ciphertext to the row it was written
// for, so a value copied to another row (or workspace) does not decrypt.
import { ApiError } from "./errors";

const VERSION = "v1";
const keys = new Map<string, Promise<CryptoKey>>();

function keyFor(secret: string | undefined): Promise<CryptoKey> {
  if (!secret || secret.length < 32) {
    // A deployment without the secret cannot store secrets; say so instead of storing them weakly.
    throw new ApiError("internal_error", "this deployment has no ENV_VARS_KEY secret (32 characters or more), so it cannot store secrets");
  }
  let key = keys.get(secret);
  if (!key) {
    key = crypto.subtle
      .digest("SHA-256", new TextEncoder().encode(secret))
      .then((raw) => crypto.subtle.importKey("raw", raw, "AES-GCM", false, ["encrypt", "decrypt"]));
    keys.set(secret, key);
  }
  return key;
}

const toB64 = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes));
const fromB64 = (s: string) => Uint8Array.from(atob(s), (ch) => ch.charCodeAt(0));

/** "v1:<base64 of IV and ciphertext>". */
export async function seal(secret: string | undefined, plaintext: string, context: string): Promise<string> {
  const key = await keyFor(secret);
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const data = new Uint8Array(
    await crypto.subtle.encrypt({ name: "AES-GCM", iv, additionalData: new TextEncoder().encode(context) }, key, new TextEncoder().encode(plaintext)),
  );
  const out = new Uint8Array(iv.length + data.length);
  out.set(iv);
  out.set(data, iv.length);
  // Values are at most a few KB: building the base64 in one call is fine.
  return `${VERSION}:${toB64(out)}`;
}

/** The plaintext of `seal`'s output; throws when the key or the context does not match. */
export async function open(secret: string | undefined, sealed: string, context: string): Promise<string> {
  const key = await keyFor(secret);
  const [version, body] = sealed.split(":", 2);
  if (version !== VERSION || !body) throw new Error("not a sealed value");
  const bytes = fromB64(body);
  const plain = await crypto.subtle.decrypt({ name: "AES-GCM", iv: bytes.slice(0, 12), additionalData: new TextEncoder().encode(context) }, key, bytes.slice(12));
  return new TextDecoder().decode(plain);
}
