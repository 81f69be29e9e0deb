import Foundation

/// Rate limits for password checks, so that bcrypt's cost is no denial-of-service lever: each
/// identity (app and login) and each client address has a token bucket that refills at a
/// rate per window (a minute by default). Per process: with several users-service replicas the effective rate is
/// their sum, while the lockout policy in the database stays exact. Time comes from the accounts'
/// clock, so tests decide when buckets refill.
actor LoginThrottle {
    /// Attempts per window, which is also the burst a quiet key may spend at once.
    struct Limits: Sendable {
        var perIdentity: Int
        var perAddress: Int
        /// The window the counts refer to, in seconds (a minute by default).
        var window: Double = 60
    }

    private struct Bucket {
        var tokens: Double
        var updated: Date
    }

    private let limits: Limits
    private let now: @Sendable () -> Date
    private var buckets: [String: Bucket] = [:]
    /// Buckets kept before full ones are forgotten.
    private let capacity = 100_000

    init(limits: Limits, now: @escaping @Sendable () -> Date) {
        self.limits = limits
        self.now = now
    }

    /// Spends one attempt of the identity and of the address, or throws 429 without spending
    /// either when one of them is exhausted.
    func admit(identity: String?, address: String?) throws {
        let now = now()
        var keys: [(String, Int)] = []
        if let identity { keys.append(("i " + identity, limits.perIdentity)) }
        if let address { keys.append(("a " + address, limits.perAddress)) }
        let refilled = keys.map { key, rate in (key, rate, refill(key, rate: rate, now: now)) }
        if let empty = refilled.first(where: { $0.2.tokens < 1 }) {
            let seconds = (1 - empty.2.tokens) * limits.window / Double(empty.1)
            throw UserError.throttled(retryAfter: max(1, Int(seconds.rounded(.up))))
        }
        if buckets.count >= capacity { forgetFull(now: now) }
        for (key, _, bucket) in refilled {
            buckets[key] = Bucket(tokens: bucket.tokens - 1, updated: now)
        }
    }

    private func refill(_ key: String, rate: Int, now: Date) -> Bucket {
        guard let bucket = buckets[key] else { return Bucket(tokens: Double(rate), updated: now) }
        // A clock set back refills nothing.
        let seconds = max(0, now.timeIntervalSince(bucket.updated))
        return Bucket(tokens: min(Double(rate), bucket.tokens + seconds * Double(rate) / limits.window), updated: now)
    }

    /// Drops buckets that have refilled completely (they hold nothing a fresh one would not);
    /// if every bucket is recent, starts over rather than grow.
    private func forgetFull(now: Date) {
        buckets = buckets.filter { now.timeIntervalSince($0.value.updated) < limits.window }
        if buckets.count >= capacity { buckets.removeAll(keepingCapacity: true) }
    }
}
