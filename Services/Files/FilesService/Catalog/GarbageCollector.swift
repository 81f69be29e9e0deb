import Logging
import PostgresNIO
import PostgresSupport
import ServiceLifecycle
import ServiceRuntime

/// Removes stored objects that no entry names any more once their grace period has passed,
/// a batch at a time; rows are claimed with `SKIP LOCKED`, so replicas share the work, and
/// stay until their object is gone.
struct GarbageCollector: Service {
    let catalog: FileCatalog
    let storage: any FileStorage
    /// How often to look for due objects.
    let interval: Duration

    func run() async throws {
        await repeatUntilShutdown(every: interval, logger: catalog.logger, failure: "file garbage not collected") {
            while try await collect() > 0 {}
        }
    }

    /// Removes up to `batch` due objects; answers how many.
    @discardableResult
    func collect(batch: Int = 100) async throws -> Int {
        try await catalog.transaction { connection in
            let rows = try await connection.query(
                """
                DELETE FROM files.garbage WHERE storage_key IN (
                    SELECT storage_key FROM files.garbage WHERE due <= \(FileCatalog.now())
                    ORDER BY due LIMIT \(batch) FOR UPDATE SKIP LOCKED)
                RETURNING app_id, storage_key
                """, logger: catalog.logger)
            var removed: [(app: String, key: String)] = []
            for try await row in rows.decode((String, String).self) { removed.append(row) }
            var failed: [(app: String, key: String)] = []
            for (app, key) in removed {
                do {
                    try await storage.delete(app: app, key: key)
                } catch  where !Task.isCancelled {
                    catalog.logger.warning(
                        "stored object not removed", metadata: ["key": "\(key)", "error": "\(error)"])
                    failed.append((app, key))
                }
            }
            // An object that cannot be removed now is tried again later, behind the others.
            if !failed.isEmpty {
                try await connection.run(
                    """
                    INSERT INTO files.garbage (storage_key, app_id, due)
                    SELECT k, a, \(FileCatalog.now() + 3_600_000) FROM unnest(\(failed.map(\.key))::text[], \(failed.map(\.app))::text[]) AS f(k, a)
                    """, logger: catalog.logger)
            }
            return removed.count - failed.count
        }
    }
}
