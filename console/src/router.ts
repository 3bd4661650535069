// Hash routes (#/requests/12): the Worker serves one page, and nothing secret ever enters the URL.
import { useEffect, useState } from "preact/hooks";

export interface Route {
  parts: string[];
  params: URLSearchParams;
}

function parse(): Route {
  const raw = location.hash.replace(/^#\/?/, "");
  const [path, query = ""] = raw.split("?");
  return { parts: path.split("/").filter(Boolean).map(decodeURIComponent), params: new URLSearchParams(query) };
}

export function useRoute(): Route {
  const [route, setRoute] = useState(parse);
  useEffect(() => {
    const on = () => setRoute(parse());
    window.addEventListener("hashchange", on);
    return () => window.removeEventListener("hashchange", on);
  }, []);
  return route;
}

export function href(...parts: (string | number)[]): string {
  return `#/${parts.map((p) => encodeURIComponent(String(p))).join("/")}`;
}

export function go(...parts: (string | number)[]) {
  location.hash = href(...parts);
}
