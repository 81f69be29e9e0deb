import DataEngine
import Foundation
import InternalProtocol
import Logging
import PostgresNIO
import PostgresSupport

/// The durable push queue in `messaging.push_jobs` and `messaging.push_deliveries`: a publish
/// adds a job in the statement (or transaction) that publishes it; ``expand(batch:now:)`` turns
/// jobs into one delivery per targeted device, a page of registrations at a time; ``claim(_:now:lease:)``
/// leases due deliveries to one sender (another takes a delivery over once its lease ends, so a
/// sender that dies loses nothing), and ``record(_:_:now:policy:)`` writes what became of each.
struct PushQueue: Sendable {
    let database: PostgresClient
    let logger: Logger

    /// Expands the oldest job not yet expanded by up to `batch` devices (in device id order,
    /// after the last it reached), in one transaction holding the job's row; answers whether
    /// there was a job.
    @discardableResult
    func expand(batch: Int = 500, now: Int64) async throws -> Bool {
        try await database.withTransaction(logger: logger) { connection -> Bool in
            let jobs = try await connection.query(
                """
                SELECT app_id, message_id, channel, targets::text, after_device FROM messaging.push_jobs
                WHERE NOT expanded ORDER BY created LIMIT 1 FOR UPDATE SKIP LOCKED
                """, logger: logger)
            var found: (String, String, String, String, String)?
            for try await row in jobs.decode((String, String, String, String, String).self) { found = row }
            guard let (app, messageId, channel, targetsText, after) = found else { return false }
            let targets = PushOptions.Targets(json: (try? JSONParser.parse(Array(targetsText.utf8))) ?? .null)
            let segment = targets.segment.flatMap { try? Selector($0) }
            let rows = try await connection.query(
                """
                SELECT device_id, os, os_version, device_token, updated FROM messaging.registrations
                WHERE app_id = \(app) AND device_id > \(after) AND (expiration IS NULL OR expiration > \(now))
                    AND os = ANY(\(targets.systems.map(\.rawValue)))
                    AND CASE WHEN \(targets.devices == nil) THEN channels @> ARRAY[\(channel)] ELSE device_id = ANY(\(targets.devices ?? [])) END
                ORDER BY device_id LIMIT \(batch)
                """, logger: logger)
            var devices: [String] = []
            var systems: [String] = []
            var tokens: [String] = []
            var registered: [Int64] = []
            var seen = 0
            var last = after
            for try await (device, os, version, token, updated) in rows.decode(
                (String, String, String?, String, Int64).self)
            {
                seen += 1
                last = device
                let fields = JSONObject([
                    ("deviceId", .string(device)), ("os", .string(os)),
                    ("osVersion", version.map(JSONValue.string) ?? .null),
                ])
                if let segment, !segment.selects(fields) { continue }
                devices.append(device)
                systems.append(os)
                tokens.append(token)
                registered.append(updated)
            }
            if !devices.isEmpty {
                try await connection.run(
                    """
                    INSERT INTO messaging.push_deliveries (app_id, message_id, device_id, os, device_token, registered, status, next_attempt)
                    SELECT \(app), \(messageId), d, o, t, r, 'pending', \(now)
                    FROM unnest(\(devices)::text[], \(systems)::text[], \(tokens)::text[], \(registered)::bigint[]) AS u(d, o, t, r)
                    ON CONFLICT DO NOTHING
                    """, logger: logger)
            }
            try await connection.run(
                """
                UPDATE messaging.push_jobs SET after_device = \(last), expanded = \(seen < batch)
                WHERE app_id = \(app) AND message_id = \(messageId)
                """, logger: logger)
            return true
        }
    }

    /// A delivery leased to this sender, with its message.
    struct Claimed: Sendable {
        let app: String
        let messageId: String
        let deviceId: String
        let os: String
        let deviceToken: String
        let registered: Int64
        let attempts: Int
        let message: JSONValue
        let headers: JSONObject
    }

    /// Leases up to `limit` due deliveries for `lease` ms, counting the attempt.
    func claim(_ limit: Int, now: Int64, lease: Int64) async throws -> [Claimed] {
        let rows = try await database.query(
            """
            UPDATE messaging.push_deliveries d SET next_attempt = \(now + lease), attempts = d.attempts + 1
            FROM messaging.push_jobs j
            WHERE (d.app_id, d.message_id, d.device_id) IN (
                    SELECT app_id, message_id, device_id FROM messaging.push_deliveries
                    WHERE status = 'pending' AND next_attempt <= \(now) ORDER BY next_attempt LIMIT \(limit) FOR UPDATE SKIP LOCKED)
                AND j.app_id = d.app_id AND j.message_id = d.message_id
            RETURNING d.app_id, d.message_id, d.device_id, d.os, d.device_token, d.registered, d.attempts, j.data::text, j.headers::text
            """, logger: logger)
        var claimed: [Claimed] = []
        for try await (app, message, device, os, token, registered, attempts, data, headers) in rows.decode(
            (String, String, String, String, String, Int64, Int32, String, String).self)
        {
            claimed.append(
                Claimed(
                    app: app, messageId: message, deviceId: device, os: os, deviceToken: token, registered: registered,
                    attempts: Int(attempts), message: (try? JSONParser.parse(Array(data.utf8))) ?? .null,
                    headers: (try? JSONParser.parse(Array(headers.utf8)))?.object ?? JSONObject()))
        }
        return claimed
    }

    /// When to try again and when to give up.
    struct RetryPolicy: Sendable {
        /// The first wait, doubled with each attempt up to `cap` (ms).
        var base: Int64 = 1_000
        var cap: Int64 = 900_000
        /// Attempts before a delivery fails for good.
        var attempts = 8

        /// The wait after `attempt` (1-based): exponential with ±20 % jitter, at least what the provider asked.
        func wait(after attempt: Int, asked: Duration?) -> Int64 {
            let exponential = min(cap, base << min(Int64(attempt - 1), 30))
            let jittered = Int64(Double(exponential) * Double.random(in: 0.8...1.2))
            let askedMilliseconds = asked?.wholeMilliseconds ?? 0
            return max(jittered, askedMilliseconds)
        }
    }

    /// Writes what became of `delivery`: delivered, failed (for good, or after the last
    /// attempt), or due again after a backoff. A device the provider no longer knows loses its
    /// registration, unless it was registered again after the provider's `since`.
    func record(_ delivery: Claimed, _ outcome: PushOutcome, now: Int64, policy: RetryPolicy) async throws {
        let key = (delivery.app, delivery.messageId, delivery.deviceId)
        switch outcome {
        case .delivered(let id):
            try await finish(key, status: "delivered", result: id)
        case .retry(let reason, let asked) where delivery.attempts < policy.attempts:
            try await database.run(
                """
                UPDATE messaging.push_deliveries SET next_attempt = \(now + policy.wait(after: delivery.attempts, asked: asked)),
                    result = \(reason)
                WHERE app_id = \(key.0) AND message_id = \(key.1) AND device_id = \(key.2)
                """, logger: logger)
        case .retry(let reason, _):
            try await finish(key, status: "failed", result: "\(reason) (after \(delivery.attempts) attempts)")
        case .unregistered(let reason, let since):
            try await database.run(
                """
                WITH gone AS (
                    DELETE FROM messaging.registrations WHERE app_id = \(key.0) AND device_id = \(key.2)
                        AND device_token = \(delivery.deviceToken) AND updated <= \(since ?? Int64.max))
                UPDATE messaging.push_deliveries SET status = 'failed', result = \(reason)
                WHERE app_id = \(key.0) AND message_id = \(key.1) AND device_id = \(key.2)
                """, logger: logger)
        case .rejected(let reason), .misconfigured(let reason):
            try await finish(key, status: "failed", result: reason)
        }
    }

    private func finish(_ key: (String, String, String), status: String, result: String) async throws {
        try await database.run(
            """
            UPDATE messaging.push_deliveries SET status = \(status), result = \(result)
            WHERE app_id = \(key.0) AND message_id = \(key.1) AND device_id = \(key.2)
            """, logger: logger)
    }

    /// `{"pending", "delivered", "failed", "failures": [up to 5 reasons]}` for a pushed message; nil when it was not pushed.
    func status(app: String, messageId: String) async throws -> JSONValue? {
        let rows = try await database.query(
            """
            SELECT j.expanded, count(d.device_id) FILTER (WHERE d.status = 'pending'),
                count(d.device_id) FILTER (WHERE d.status = 'delivered'), count(d.device_id) FILTER (WHERE d.status = 'failed'),
                coalesce((array_agg(DISTINCT d.result) FILTER (WHERE d.status = 'failed'))[1:5], '{}')
            FROM messaging.push_jobs j LEFT JOIN messaging.push_deliveries d USING (app_id, message_id)
            WHERE j.app_id = \(app) AND j.message_id = \(messageId)
            GROUP BY j.expanded
            """, logger: logger)
        for try await (expanded, pending, delivered, failed, failures) in rows.decode(
            (Bool, Int64, Int64, Int64, [String]).self)
        {
            return .object(
                JSONObject([
                    ("pending", .integer(pending)), ("delivered", .integer(delivered)), ("failed", .integer(failed)),
                    ("failures", .array(failures.map(JSONValue.string))), ("resolved", .bool(expanded)),
                ]))
        }
        return nil
    }

    /// Removes up to `batch` push jobs older than a day (their deliveries with them: the
    /// providers give up on a push after a day too); answers how many went.
    @discardableResult
    func sweep(now: Int64, batch: Int = 1_000) async throws -> Int {
        let rows = try await database.query(
            """
            WITH gone AS (
                DELETE FROM messaging.push_jobs WHERE ctid IN (
                    SELECT ctid FROM messaging.push_jobs WHERE created < \(now - PushPayloads.lifetime * 1_000) LIMIT \(batch))
                RETURNING 1)
            SELECT count(*) FROM gone
            """, logger: logger)
        for try await count in rows.decode(Int64.self) { return Int(count) }
        return 0
    }
}
