// Parses the manifest TSV (read.md §2) and the search TSV (search.md §5).

export interface Row {
  id: string;
  bundle: string;
  kind: string;
  status: string;
  grain: string;
  summary: string;
  /** Outgoing link ids; empty for `-`. */
  links: string[];
}

export interface Manifest {
  tenant: string;
  bundles: string[];
  rows: Row[];
  /** The TSV as the package returned it. */
  text: string;
}

export interface Hit extends Row {
  /** A direct hit's pointer into the body; null for `-` and for linked hits. */
  pos: number | null;
  direct: boolean;
}

export interface SearchResult {
  query: string;
  direct: number;
  linked: number;
  hits: Hit[];
}

const COLUMNS = 'id\tbundle\tkind\tstatus\tgrain\tsummary\tlinks';

function row(cells: string[]): Row {
  return {
    id: cells[0],
    bundle: cells[1],
    kind: cells[2],
    status: cells[3],
    grain: cells[4],
    summary: cells[5],
    links: cells[6] === '-' || cells[6] === undefined ? [] : cells[6].split(' '),
  };
}

function header(lines: string[], name: string): string | undefined {
  const prefix = `# ${name}:`;
  const line = lines.find((l) => l.startsWith(prefix));
  return line === undefined ? undefined : line.slice(prefix.length).trim();
}

export function parseManifest(text: string): Manifest {
  const lines = text.split('\n');
  const rows: Row[] = [];
  let inRows = false;
  for (const line of lines) {
    if (!inRows) {
      if (line === COLUMNS) inRows = true;
      continue;
    }
    if (line === '') continue;
    rows.push(row(line.split('\t')));
  }
  const bundles = header(lines, 'bundles');
  return { tenant: header(lines, 'tenant') ?? '', bundles: bundles ? bundles.split(' ') : [], rows, text };
}

export function parseSearch(text: string): SearchResult {
  const lines = text.split('\n');
  const counts = /^# hits: (\d+) direct, (\d+) linked$/.exec(lines.find((l) => l.startsWith('# hits:')) ?? '');
  const direct = counts ? Number(counts[1]) : 0;
  const linked = counts ? Number(counts[2]) : 0;
  const query = (lines.find((l) => l.startsWith('# query:')) ?? '# query:').slice('# query:'.length).trimStart();
  const hits: Hit[] = [];
  let inRows = false;
  for (const line of lines) {
    if (!inRows) {
      if (line.startsWith(COLUMNS)) inRows = true;
      continue;
    }
    if (line === '') continue;
    const cells = line.split('\t');
    const isDirect = hits.length < direct;
    const pos = cells[7];
    hits.push({ ...row(cells), pos: isDirect && pos !== '-' && pos !== undefined ? Number(pos) : null, direct: isDirect });
  }
  return { query, direct, linked, hits };
}

/** The token estimate of agent.md and cli.md: ceil(UTF-16 length / 4). */
export function tokens(text: string): number {
  return Math.ceil(text.length / 4);
}
