// Times are shown relative ("3 minutes ago") with the exact time on hover; one timer
// keeps every relative time on the page current.

const UNITS = [
  ["year", 365 * 86400],
  ["month", 30 * 86400],
  ["day", 86400],
  ["hour", 3600],
  ["minute", 60],
  ["second", 1],
];
const format = new Intl.RelativeTimeFormat("en", { numeric: "auto" });

export function relative(iso, now = Date.now()) {
  const seconds = (new Date(iso).getTime() - now) / 1000;
  if (!Number.isFinite(seconds)) return "";
  if (Math.abs(seconds) < 10) return "just now";
  for (const [unit, size] of UNITS) {
    if (Math.abs(seconds) >= size || unit === "second") return format.format(Math.round(seconds / size), unit);
  }
  return "";
}

/** A <time> element showing `iso` relative, exact in its title and datetime. */
export function timeAgo(iso) {
  const el = document.createElement("time");
  if (!iso) return el;
  el.dateTime = iso;
  el.title = new Date(iso).toLocaleString();
  el.textContent = relative(iso);
  return el;
}

setInterval(() => {
  for (const el of document.querySelectorAll("time[datetime]")) el.textContent = relative(el.dateTime);
}, 15_000);
