import Foundation

/// OAuth access tokens for FCM service accounts (push-delivery §2.1): one per account, kept until
/// five minutes before it expires, fetched once however many sends ask at the same time. At
/// most ``capacity`` accounts are kept, the soonest to expire dropped first.
actor FCMTokens {
    static let capacity = 1_000

    /// A fetched token and how long it lives, in seconds.
    typealias Fetch = @Sendable () async throws -> (token: String, lifetime: Int)

    private var tokens: [String: (token: String, expires: Date)] = [:]
    private var fetching: [String: Task<(token: String, lifetime: Int), any Error>] = [:]
    private let now: @Sendable () -> Date

    /// Tokens kept as of `now` (a test moves it).
    init(now: @escaping @Sendable () -> Date = { Date() }) {
        self.now = now
    }

    /// The account's token: the kept one, the one being fetched, or one `fetch` gets now.
    func token(for account: String, fetch: @escaping Fetch) async throws -> String {
        if let kept = tokens[account], kept.expires > now() { return kept.token }
        if let running = fetching[account] { return try await running.value.token }
        let task = Task { try await fetch() }
        fetching[account] = task
        defer { fetching[account] = nil }
        let fetched = try await task.value
        if tokens[account] == nil, tokens.count >= Self.capacity,
            let soonest = tokens.min(by: { $0.value.expires < $1.value.expires })
        {
            tokens[soonest.key] = nil
        }
        tokens[account] = (fetched.token, now().addingTimeInterval(TimeInterval(max(0, fetched.lifetime - 300))))
        return fetched.token
    }

    /// Forgets `token` (FCM answered 401 to it), so the next send fetches another.
    func expire(_ token: String, for account: String) {
        if tokens[account]?.token == token { tokens[account] = nil }
    }
}
