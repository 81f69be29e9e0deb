import ServiceRuntime

/// The hosts and ports an upload from a URL may reach although their addresses are internal
/// (`BAAS_FILES_URL_ALLOWED_HOSTS`). An entry is `host:port`, or a bare `host` meaning its
/// default ports 80 and 443 only; an IPv6 literal takes brackets when a port follows
/// (`[::1]:8080`). Entries name ports, not only hosts, so allowing one service of a host never
/// lets uploads probe that host's other ports.
struct SourceAllowList: Sendable {
    /// One allowed destination.
    private struct Destination: Hashable, Sendable {
        let host: String
        let port: Int
    }

    /// The ports a bare host stands for.
    static let defaultPorts = [80, 443]

    private let destinations: Set<Destination>

    /// The list of `entries` (trimmed, any case); a malformed entry is a usage error.
    init(parsing entries: [String]) throws {
        var destinations = Set<Destination>()
        for entry in entries {
            let (host, ports) = try Self.parse(entry.lowercased())
            for port in ports { destinations.insert(Destination(host: host, port: port)) }
        }
        self.destinations = destinations
    }

    /// Whether `host` (lower-cased, IPv6 literals without brackets) may be reached on `port`.
    func allows(host: String, port: Int) -> Bool {
        destinations.contains(Destination(host: host, port: port))
    }

    /// An entry's host and the ports it names.
    private static func parse(_ entry: String) throws -> (String, [Int]) {
        if entry.hasPrefix("[") {
            guard let close = entry.firstIndex(of: "]") else { throw malformed(entry) }
            let host = String(entry[entry.index(after: entry.startIndex)..<close])
            let rest = entry[entry.index(after: close)...]
            if rest.isEmpty { return try (nonEmpty(host, entry), defaultPorts) }
            guard rest.hasPrefix(":") else { throw malformed(entry) }
            return try (nonEmpty(host, entry), [port(rest.dropFirst(), entry)])
        }
        let parts = entry.split(separator: ":", omittingEmptySubsequences: false)
        // No colon is a name or an IPv4 address; several are a bare IPv6 literal.
        guard parts.count == 2 else { return try (nonEmpty(entry, entry), defaultPorts) }
        return try (nonEmpty(String(parts[0]), entry), [port(parts[1], entry)])
    }

    private static func port(_ text: Substring, _ entry: String) throws -> Int {
        guard let port = Int(text), (1...65_535).contains(port) else { throw malformed(entry) }
        return port
    }

    private static func nonEmpty(_ host: String, _ entry: String) throws -> String {
        guard !host.isEmpty else { throw malformed(entry) }
        return host
    }

    private static func malformed(_ entry: String) -> UsageError {
        UsageError("BAAS_FILES_URL_ALLOWED_HOSTS: '\(entry)' is not a host or host:port")
    }
}
