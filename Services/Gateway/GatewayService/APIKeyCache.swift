import InternalProtocol

/// Briefly remembers how app id and key pairs resolved — rejections included, so a client
/// retrying a wrong key does not reach users-service on every request. Bounded: when full it
/// starts over, which costs a round of lookups and never grows memory.
actor APIKeyCache {
    struct Pair: Hashable {
        let appID: String
        let apiKey: String
    }

    private struct Entry {
        let result: Result<ResolveAPIKey.Response, ErrorEnvelope>
        let expires: ContinuousClock.Instant
    }

    private var entries: [Pair: Entry] = [:]
    private let lifetime: Duration
    private let capacity: Int

    init(lifetime: Duration, capacity: Int = 10_000) {
        self.lifetime = lifetime
        self.capacity = capacity
    }

    func lookup(_ pair: Pair) -> Result<ResolveAPIKey.Response, ErrorEnvelope>? {
        guard let entry = entries[pair] else { return nil }
        guard entry.expires > .now else {
            entries[pair] = nil
            return nil
        }
        return entry.result
    }

    func store(_ result: Result<ResolveAPIKey.Response, ErrorEnvelope>, for pair: Pair) {
        if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
        entries[pair] = Entry(result: result, expires: .now + lifetime)
    }
}
