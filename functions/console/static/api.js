// The console's one way to the API: same origin, the session cookie, the console's header on
// every request, and the API's own sentence when it refuses. docs/console.md.

export class ApiError extends Error {
  constructor(status, message, code) {
    super(message);
    this.status = status;
    this.code = code ?? null;
  }
}

let onSignedOut = () => {};

/** Who hears that the session ended (a 401 from any call). */
export function whenSignedOut(listener) {
  onSignedOut = listener;
}

function sentence(status, payload, statusText) {
  if (payload && typeof payload === "object") {
    // /knowledge: {success, message, code}; pages: problem+json {title, detail, code}; verbs: {error, code}
    const text = payload.message ?? payload.detail ?? payload.error ?? payload.title;
    if (typeof text === "string" && text) return text;
  }
  return `The service answered ${status}${statusText ? " " + statusText : ""} without a sentence.`;
}

/**
 * One request. Resolves with the envelope's data (or the page's JSON); rejects with an ApiError.
 * keepSession: a 401 is this route's refusal, not the session's end (the pages surface answers 401
 * to whoever is not the project's admin); the caller asks /knowledge/me to tell the two apart.
 */
export async function request(method, path, { query, body, headers, keepSession = false } = {}) {
  const url = new URL(path, window.location.origin);
  for (const [key, value] of Object.entries(query ?? {})) {
    if (value !== undefined && value !== null) url.searchParams.set(key, value);
  }
  const init = {
    method,
    credentials: "same-origin",
    headers: { "X-Knowledge-Console": "1", Accept: "application/json", ...headers },
  };
  if (body instanceof FormData) {
    init.body = body; // multipart: the browser writes the boundary
  } else if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(url, init);
  } catch (error) {
    throw new ApiError(0, `The service could not be reached (${error.message}).`, "network");
  }
  let payload = null;
  const type = response.headers.get("Content-Type") ?? "";
  if (type.includes("json")) {
    try {
      payload = await response.json();
    } catch {
      payload = null;
    }
  }
  if (response.ok && !(payload && payload.success === false)) {
    return payload && typeof payload === "object" && "success" in payload ? payload.data : payload;
  }
  const error = new ApiError(response.status, sentence(response.status, payload, response.statusText), payload?.code);
  if (response.status === 401 && !keepSession) onSignedOut(error);
  throw error;
}

export const get = (path, query) => request("GET", path, { query });
export const post = (path, body = {}, query) => request("POST", path, { body, query });

/** Exchange a token for a session; the token is sent once and never kept. */
export const signIn = (token) =>
  request("POST", "/knowledge/session", { body: {}, headers: { Authorization: `Bearer ${token}` } });
export const signOut = () => request("DELETE", "/knowledge/session");
