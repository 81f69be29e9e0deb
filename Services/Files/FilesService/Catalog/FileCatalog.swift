import Foundation
import InternalProtocol
import Logging
import PostgresNIO
import PostgresSupport

/// Every app's file tree in `files.entries`. Writes that replace or remove bytes hand the old
/// storage objects to `files.garbage` in the same transaction, due after a grace period, so a
/// download that has just looked an object up still finds it.
struct FileCatalog: Sendable {
    let database: PostgresClient
    let logger: Logger
    /// How long a replaced or removed object stays readable, in milliseconds.
    let deletionGrace: Int64

    /// The entry at `path`, if any (the root has none: it always exists).
    func entry(app: String, path: FilePath) async throws -> FileEntry? {
        let rows = try await database.query(
            "SELECT \(unescaped: Self.columns) FROM files.entries WHERE app_id = \(app) AND path = \(path.description)",
            logger: logger)
        for try await row in rows { return try Self.entry(row) }
        return nil
    }

    /// Creates the directory `path` and any missing directory above it; an existing directory
    /// is kept, a file in the way is 6003.
    func createDirectory(app: String, path: FilePath, owner: String?) async throws {
        try await transaction { connection in
            try await Self.ensureDirectories(
                path.ancestors + [path], app: app, owner: owner, on: connection, logger: logger)
        }
    }

    /// Records `file` at `path`, creating missing directories above it. An existing file is
    /// replaced only with `overwrite` (6003 otherwise) and its object becomes garbage; a
    /// directory at `path` is 6003.
    func putFile(app: String, path: FilePath, file: StoredFile, owner: String?, overwrite: Bool) async throws {
        try await transaction { connection in
            try await Self.lock(path, app: app, on: connection, logger: logger)
            try await Self.ensureDirectories(path.ancestors, app: app, owner: owner, on: connection, logger: logger)
            for _ in 0..<3 {
                let rows = try await connection.query(
                    """
                    SELECT is_directory, storage_key FROM files.entries
                    WHERE app_id = \(app) AND path = \(path.description) FOR UPDATE
                    """, logger: logger)
                var existing: (Bool, String?)?
                for try await row in rows.decode((Bool, String?).self) { existing = row }
                if let (isDirectory, oldKey) = existing {
                    if isDirectory { throw FileError.kindConflict(path.description, expected: "file") }
                    if !overwrite { throw FileError.alreadyExists(path.description) }
                    try await replaceBytes(app: app, path: path, with: file, old: oldKey, on: connection)
                    return
                }
                // Another writer created it meanwhile: lock its row and decide again.
                if try await insertFile(app: app, path: path, file: file, owner: owner, on: connection) { return }
            }
            throw FileError.alreadyExists(path.description)
        }
    }

    /// Points the file at `path` to `file`'s object; the old object becomes garbage.
    func replaceBytes(
        app: String, path: FilePath, with file: StoredFile, old: String?, on connection: PostgresConnection
    )
        async throws
    {
        try await connection.run(
            """
            UPDATE files.entries SET size = \(file.size), content_type = \(file.contentType), storage_key = \(file.key),
                updated = \(Self.now())
            WHERE app_id = \(app) AND path = \(path.description)
            """, logger: logger)
        if let old { try await discard([old], app: app, on: connection) }
    }

    /// Records a new file at `path`; false when something is there already.
    func insertFile(app: String, path: FilePath, file: StoredFile, owner: String?, on connection: PostgresConnection)
        async throws -> Bool
    {
        let now = Self.now()
        let inserted = try await connection.query(
            """
            INSERT INTO files.entries
                (app_id, path, parent, name, is_directory, size, content_type, storage_key, created, updated, owner_id)
            VALUES (\(app), \(path.description), \(path.parent.description), \(path.name), false, \(file.size),
                \(file.contentType), \(file.key), \(now), \(now), \(owner))
            ON CONFLICT (app_id, path) DO NOTHING RETURNING 1
            """, logger: logger)
        for try await _ in inserted { return true }
        return false
    }

    /// Removes the entry at `path` and, for a directory, everything in it; 6000 when there is
    /// nothing there. Answers how many entries went.
    @discardableResult
    func remove(app: String, path: FilePath) async throws -> Int {
        guard !path.isRoot else { throw FileError.invalidBody("The root directory cannot be deleted") }
        let (low, high) = Self.below(path)
        return try await transaction { connection in
            // Lock the top first: the range statement after it then sees every entry committed
            // under it meanwhile (a file uploaded into the directory being deleted).
            try await lockEntry(path, app: app, on: connection, missing: FileError.notFound(path.description))
            let rows = try await connection.query(
                """
                DELETE FROM files.entries
                WHERE app_id = \(app) AND (path = \(path.description) OR (path >= \(low) AND path < \(high)))
                RETURNING storage_key
                """, logger: logger)
            var count = 0
            var keys: [String] = []
            for try await key in rows.decode(String?.self) {
                count += 1
                if let key { keys.append(key) }
            }
            try await discard(keys, app: app, on: connection)
            // Cells on what is gone would otherwise apply to whatever takes its place.
            try await connection.run(
                """
                DELETE FROM files.permissions
                WHERE app_id = \(app) AND (path = \(path.description) OR (path >= \(low) AND path < \(high)))
                """, logger: logger)
            return count
        }
    }

    /// One page of the directory's entries in path order.
    func list(app: String, directory: FilePath, filter: ListingFilter, limit: Int, offset: Int) async throws
        -> [FileEntry]
    {
        var query = Self.matching(app, directory, filter, counting: false)
        query.binds.append(limit)
        query.binds.append(offset)
        let count = query.binds.count
        query.sql =
            "SELECT \(Self.columns) FROM files.entries WHERE \(query.sql) ORDER BY path LIMIT $\(count - 1) OFFSET $\(count)"
        let rows = try await database.query(query, logger: logger)
        var entries: [FileEntry] = []
        for try await row in rows { entries.append(try Self.entry(row)) }
        return entries
    }

    /// Calls `body` with the entries of the directory the filter takes, in path order, a batch
    /// of 500 at a time (so that a batch can be judged at once), until it answers false.
    func forEachBatch(
        app: String, directory: FilePath, filter: ListingFilter, _ body: ([FileEntry]) async throws -> Bool
    ) async throws {
        let batch = 500
        var scanned = 0
        while true {
            let entries = try await list(app: app, directory: directory, filter: filter, limit: batch, offset: scanned)
            guard try await body(entries), entries.count == batch else { return }
            scanned += batch
        }
    }

    /// How many entries of the directory the filter takes.
    func count(app: String, directory: FilePath, filter: ListingFilter) async throws -> Int {
        var query = Self.matching(app, directory, filter, counting: true)
        query.sql = "SELECT count(*) FROM files.entries WHERE " + query.sql
        let rows = try await database.query(query, logger: logger)
        for try await count in rows.decode(Int.self) { return count }
        return 0
    }

    /// Hands `keys` and their resized copies to the garbage table, due after the grace period.
    func discard(_ keys: [String], app: String, on connection: PostgresConnection) async throws {
        guard !keys.isEmpty else { return }
        try await connection.run(
            """
            WITH copies AS (DELETE FROM files.renditions WHERE original_key = ANY(\(keys)::text[]) RETURNING storage_key)
            INSERT INTO files.garbage (storage_key, app_id, due)
            SELECT key, \(app), \(Self.now() + deletionGrace)
            FROM (SELECT unnest(\(keys)::text[]) UNION ALL SELECT storage_key FROM copies) AS k(key)
            ON CONFLICT DO NOTHING
            """, logger: logger)
    }

    /// Runs `body` in a transaction on one pooled connection: committed when it returns,
    /// rolled back when it throws (its error passes unchanged).
    func transaction<Result: Sendable>(
        _ body: (PostgresConnection) async throws -> Result
    ) async throws -> Result {
        try await database.withConnection { connection in
            try await connection.run("BEGIN", logger: logger)
            do {
                let result = try await body(connection)
                try await connection.run("COMMIT", logger: logger)
                return result
            } catch {
                _ = try? await connection.query("ROLLBACK", logger: logger)
                throw error
            }
        }
    }
}

extension FileCatalog {
    static let columns =
        "path, is_directory, size, content_type, storage_key, created, updated, owner_id"

    static func entry(_ row: PostgresRow) throws -> FileEntry {
        let (path, isDirectory, size, contentType, key, created, updated, owner) = try row.decode(
            (String, Bool, Int64, String?, String?, Int64, Int64, String?).self)
        return FileEntry(
            path: try FilePath(decoded: path), isDirectory: isDirectory, size: size, contentType: contentType,
            storageKey: key, created: created, updated: updated, ownerId: owner)
    }

    /// Epoch milliseconds now.
    static func now() -> Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded()) }

    /// Bounds of everything strictly under `path` as a range of the primary key (`/` sorts
    /// just before `0` in byte order); the root's range is every path.
    static func below(_ path: FilePath) -> (low: String, high: String) {
        path.isRoot ? ("", "\u{10FFFF}") : (path.description + "/", path.description + "0")
    }

    /// The condition a listing (or count) of `directory` applies: its children, or with
    /// `recursive` everything under it; directories when asked; names matching the pattern.
    /// One statement shape whatever the filter, every value bound.
    static func matching(_ app: String, _ directory: FilePath, _ filter: ListingFilter, counting: Bool) -> PostgresQuery
    {
        let (low, high) = below(directory)
        let directories = filter.recursive ? counting && filter.countDirectories : !counting || filter.countDirectories
        let pattern = filter.pattern.map(Glob.likePattern)
        return """
            app_id = \(app)
            AND CASE WHEN \(filter.recursive) THEN path >= \(low) AND path < \(high) ELSE parent = \(directory.description) END
            AND (\(directories) OR NOT is_directory)
            AND (\(pattern)::text IS NULL OR name LIKE \(pattern) ESCAPE '\\')
            """
    }

    /// Inserts each of `directories` that is missing.
    private static func insertDirectories(
        _ directories: [FilePath], app: String, owner: String?, on connection: PostgresConnection, logger: Logger
    ) async throws {
        let now = now()
        try await connection.run(
            """
            INSERT INTO files.entries (app_id, path, parent, name, is_directory, created, updated, owner_id)
            SELECT \(app), p, pa, n, true, \(now), \(now), \(owner)
            FROM unnest(\(directories.map(\.description))::text[], \(directories.map(\.parent.description))::text[],
                \(directories.map(\.name))::text[]) AS d(p, pa, n)
            ON CONFLICT (app_id, path) DO NOTHING
            """, logger: logger)
    }

    /// Serialises writers of one path until the transaction ends (appends read the current
    /// bytes and must see no other change land meanwhile).
    static func lock(_ path: FilePath, app: String, on connection: PostgresConnection, logger: Logger) async throws {
        try await connection.run(
            "SELECT pg_advisory_xact_lock(hashtextextended(\(app + "/" + path.description), 0))", logger: logger)
    }

    /// Creates each of `directories` (top first) that is missing; 6003 when one is a file.
    static func ensureDirectories(
        _ directories: [FilePath], app: String, owner: String?, on connection: PostgresConnection, logger: Logger
    ) async throws {
        guard !directories.isEmpty else { return }
        let paths = directories.map(\.description)
        try await insertDirectories(directories, app: app, owner: owner, on: connection, logger: logger)
        // Key-share locks on the directories keep a concurrent delete or move of one of them
        // waiting until this transaction ends; one that won the race leaves a row missing, and
        // the insert runs again.
        for _ in 0..<3 {
            let rows = try await connection.query(
                """
                SELECT path, is_directory FROM files.entries WHERE app_id = \(app) AND path = ANY(\(paths)::text[])
                ORDER BY path FOR KEY SHARE
                """, logger: logger)
            var found = 0
            for try await (path, isDirectory) in rows.decode((String, Bool).self) {
                if !isDirectory { throw FileError.kindConflict(path, expected: "directory") }
                found += 1
            }
            if found == paths.count { return }
            try await insertDirectories(directories, app: app, owner: owner, on: connection, logger: logger)
        }
        throw FileError.targetExists(directories.last?.description ?? "")
    }
}

/// Shell-style name patterns.
enum Glob {
    /// `pattern` as a `LIKE` pattern with `\` escapes: `*` any run, `?` one character, the rest
    /// literal.
    static func likePattern(_ pattern: String) -> String {
        var like = ""
        for character in pattern {
            switch character {
            case "*": like.append("%")
            case "?": like.append("_")
            case "%", "_", "\\":
                like.append("\\")
                like.append(character)
            default: like.append(character)
            }
        }
        return like
    }
}
