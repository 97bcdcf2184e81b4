import { html, type Html } from '@licensing/runtime';
import type { Artifact, Release } from '@licensing/proto';

// A Sparkle appcast (RSS 2.0 with Sparkle's namespace): one item per release, newest first, each with
// its version, notes, date and the enclosure that downloads it. Sparkle compares sparkle:version.
// Written with the project's one escaping template (XML text and attributes escape as HTML's do).

export interface AppcastItem {
  release: Release;
  artifact: Artifact;
  url: string;
}

function item({ release, artifact, url }: AppcastItem): Html {
  return html`    <item>
      <title>${release.version}</title>
${release.published_at && html`      <pubDate>${new Date(release.published_at).toUTCString()}</pubDate>\n`}      <sparkle:version>${release.version}</sparkle:version>
      <sparkle:shortVersionString>${release.version}</sparkle:shortVersionString>
${release.channel !== 'stable' && html`      <sparkle:channel>${release.channel}</sparkle:channel>\n`}${release.notes && html`      <description>${release.notes}</description>\n`}      <enclosure url="${url}" length="${artifact.size}" type="application/octet-stream"${artifact.signature && html` sparkle:edSignature="${artifact.signature}"`}/>
    </item>
`;
}

export function appcastXml(selfUrl: string, items: AppcastItem[]): string {
  return String(html`<?xml version="1.0" encoding="utf-8"?>
<rss version="2.0" xmlns:sparkle="http://www.andymatuschak.org/xml-namespaces/sparkle">
  <channel>
    <title>Updates</title>
    <link>${selfUrl}</link>
${items.map(item)}  </channel>
</rss>
`);
}
