import DataEngine
import Foundation

/// APNs provider tokens, one per key and team for the whole process and shared by every
/// connection (push-delivery §1.3): a token is reused for 50 minutes, as Apple refuses one older
/// than an hour and answers 429 to a new one more often than every 20 minutes; re-signing per
/// request would do exactly that, ECDSA signatures being randomized. At most ``capacity`` keys
/// are kept, the oldest token dropped first.
actor APNsTokens {
    static let lifetime: TimeInterval = 50 * 60
    static let capacity = 1_000

    private var tokens: [String: (token: String, issued: Date)] = [:]
    private let now: @Sendable () -> Date

    /// Tokens issued as of `now` (a test moves it).
    init(now: @escaping @Sendable () -> Date = { Date() }) {
        self.now = now
    }

    /// The token for `credential`, minted when there is none or it is 50 minutes old.
    func token(for credential: APNsCredential) throws -> String {
        let key = credential.teamId + "/" + credential.keyId
        let instant = now()
        if let cached = tokens[key], instant.timeIntervalSince(cached.issued) < Self.lifetime, cached.issued <= instant
        {
            return cached.token
        }
        // Whole seconds: APNs refuses a fractional `iat`.
        let issued = Date(timeIntervalSince1970: instant.timeIntervalSince1970.rounded(.down))
        let token = try JSONWebToken.es256(
            header: JSONObject([("alg", .string("ES256")), ("kid", .string(credential.keyId))]),
            claims: JSONObject([
                ("iss", .string(credential.teamId)), ("iat", .integer(Int64(issued.timeIntervalSince1970))),
            ]),
            key: credential.key)
        if tokens[key] == nil, tokens.count >= Self.capacity,
            let oldest = tokens.min(by: { $0.value.issued < $1.value.issued })
        {
            tokens[oldest.key] = nil
        }
        tokens[key] = (token, issued)
        return token
    }

    /// Forgets `token` when APNs called it expired and it is at least 20 minutes old, so the
    /// next request mints another; whether it did (a younger token is a clock problem that a
    /// new token would only make worse).
    func expire(_ token: String, for credential: APNsCredential) -> Bool {
        let key = credential.teamId + "/" + credential.keyId
        guard let cached = tokens[key], cached.token == token, now().timeIntervalSince(cached.issued) >= 20 * 60 else {
            return false
        }
        tokens[key] = nil
        return true
    }
}
