/// Where URLs of files start in the answer being made: the public base URL, the prefix the
/// client addressed the app by (`/{appId}/{apiKey}`) and `/files/`. The internal server binds
/// it around each public request it serves; outside one it is nil, and `FILE_REF` values answer
/// as bare paths. Since the prefix holds the requester's API key, only answers to the requester
/// may be rendered with it: what reaches anyone else (change events, emails) keeps paths.
package enum FileLinks {
    @TaskLocal package static var base: String?

    /// A stored `FILE_REF` value as an answer with links `base` carries it, as the data engine
    /// renders it in SQL: a URL (text saved before the column kept paths) as it is, a path (a
    /// leading slash ignored) after `base`, percent-encoded name by name.
    package static func url(of value: String, base: String) -> String {
        if value.hasPrefix("http://") || value.hasPrefix("https://") { return value }
        let names = value.drop { $0 == "/" }.split(separator: "/", omittingEmptySubsequences: false)
        return base + names.map { PercentEncoding.encodeSegment(String($0)) }.joined(separator: "/")
    }
}
