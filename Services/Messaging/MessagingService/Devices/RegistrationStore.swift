import DataEngine
import Foundation
import Logging
import PostgresNIO

/// Device registrations in `messaging.registrations`, one per device id of an app: registering
/// again replaces its token, OS, channels and expiration and keeps its id. A registration made
/// by a logged-in user is theirs: only they (or the server-code key) read, replace or remove it,
/// so no one else can take over its pushes. A registration past its expiration is neither
/// answered nor pushed to, and the sweeper removes it.
struct RegistrationStore: Sendable {
    let database: PostgresClient
    let logger: Logger

    /// Who asks: the logged-in user, if any, and whether with the server-code key (which acts
    /// for every owner and leaves ownership as it is).
    struct Caller: Sendable {
        let userID: String?
        let isServer: Bool
    }

    /// Registers (or re-registers) a device; answers the registration id, or nil when another
    /// user's live registration holds the device id.
    func register(app: String, _ registration: DeviceRegistration, by caller: Caller, now: Int64) async throws
        -> String?
    {
        let rows = try await database.query(
            """
            INSERT INTO messaging.registrations AS r (app_id, id, device_id, device_token, os, os_version, channels, expiration, updated,
                owner_id)
            VALUES (\(app), \(UUID().uuidString), \(registration.deviceId), \(registration.deviceToken), \(registration.os.rawValue),
                \(registration.osVersion), \(registration.channels), \(registration.expiration), \(now), \(caller.userID))
            ON CONFLICT (app_id, device_id) DO UPDATE SET device_token = excluded.device_token, os = excluded.os,
                os_version = excluded.os_version, channels = excluded.channels, expiration = excluded.expiration,
                updated = excluded.updated,
                owner_id = CASE WHEN \(caller.isServer) THEN r.owner_id ELSE excluded.owner_id END,
                id = CASE WHEN r.expiration IS NULL OR r.expiration > \(now) THEN r.id ELSE excluded.id END
            WHERE r.owner_id IS NULL OR r.owner_id = excluded.owner_id OR \(caller.isServer) OR r.expiration <= \(now)
            RETURNING id
            """, logger: logger)
        for try await id in rows.decode(String.self) { return id }
        return nil
    }

    /// The device's live registration, or nil (also when it is another user's).
    func registration(app: String, deviceId: String, for caller: Caller, now: Int64) async throws -> DeviceRegistration?
    {
        let rows = try await database.query(
            """
            SELECT id, device_token, device_id, os, os_version, channels, expiration FROM messaging.registrations
            WHERE app_id = \(app) AND device_id = \(deviceId) AND (expiration IS NULL OR expiration > \(now))
                AND (owner_id IS NULL OR owner_id = \(caller.userID) OR \(caller.isServer))
            """, logger: logger)
        for try await (id, token, device, os, version, channels, expiration) in rows.decode(
            (String, String, String, String, String?, [String], Int64?).self)
        {
            guard let os = DeviceRegistration.OS(rawValue: os) else { continue }
            var registration = DeviceRegistration(
                deviceToken: token, deviceId: device, os: os, osVersion: version, channels: channels,
                expiration: expiration)
            registration.id = id
            return registration
        }
        return nil
    }

    /// Removes the device's live registration; false when it had none (or it is another user's).
    func unregister(app: String, deviceId: String, by caller: Caller, now: Int64) async throws -> Bool {
        let rows = try await database.query(
            """
            DELETE FROM messaging.registrations WHERE app_id = \(app) AND device_id = \(deviceId)
                AND (owner_id IS NULL OR owner_id = \(caller.userID) OR \(caller.isServer))
            RETURNING expiration IS NULL OR expiration > \(now)
            """, logger: logger)
        for try await live in rows.decode(Bool.self) { return live }
        return false
    }

    /// Removes up to `batch` expired registrations; answers how many went.
    @discardableResult
    func sweep(now: Int64, batch: Int = 1_000) async throws -> Int {
        let rows = try await database.query(
            """
            WITH gone AS (
                DELETE FROM messaging.registrations WHERE ctid IN (
                    SELECT ctid FROM messaging.registrations WHERE expiration <= \(now) LIMIT \(batch))
                RETURNING 1)
            SELECT count(*) FROM gone
            """, logger: logger)
        for try await count in rows.decode(Int64.self) { return Int(count) }
        return 0
    }
}
