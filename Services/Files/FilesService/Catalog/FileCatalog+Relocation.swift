import InternalProtocol
import Logging
import PostgresNIO
import PostgresSupport

extension FileCatalog {
    /// The most entries one copy takes (a directory with everything in it).
    static let copyLimit = 10_000

    /// Moves the entry at `source`, with everything in it, to `destination` (a move or a
    /// rename), creating missing directories above the destination: one statement over the
    /// source's key range. 6007 without a source, 6018 when the destination exists.
    func relocate(app: String, from source: FilePath, to destination: FilePath, owner: String?) async throws {
        guard !source.isRoot else { throw FileError.invalidBody("The root directory cannot be moved") }
        guard destination != source else { throw FileError.targetExists(destination.description) }
        guard !destination.isWithin(source) else {
            throw FileError.invalidBody("'/\(source)' cannot be moved into itself")
        }
        let (low, high) = Self.below(source)
        let (old, new) = (source.description, destination.description)
        try await mappingConflicts(at: destination) { connection in
            try await Self.lock(destination, app: app, on: connection, logger: logger)
            try await Self.ensureDirectories(
                destination.ancestors, app: app, owner: owner, on: connection, logger: logger)
            try await requireVacant(destination, app: app, on: connection)
            // Lock the source first: the range statement after it then sees every entry
            // committed under it meanwhile (a file uploaded into a directory being moved).
            try await lockEntry(source, app: app, on: connection, missing: FileError.sourceNotFound(old))
            try await connection.run(
                """
                UPDATE files.entries SET
                    path = \(new) || substr(path, char_length(\(old)) + 1),
                    parent = CASE WHEN path = \(old) THEN \(destination.parent.description)
                        ELSE \(new) || substr(parent, char_length(\(old)) + 1) END,
                    name = CASE WHEN path = \(old) THEN \(destination.name) ELSE name END
                WHERE app_id = \(app) AND (path = \(old) OR (path >= \(low) AND path < \(high)))
                """, logger: logger)
            // The cells move with what they are set on.
            try await connection.run(
                """
                UPDATE files.permissions SET path = \(new) || substr(path, char_length(\(old)) + 1)
                WHERE app_id = \(app) AND (path = \(old) OR (path >= \(low) AND path < \(high)))
                """, logger: logger)
        }
    }

    /// The entry at `path` and everything in it, in path order; 6007 when there is none, 400
    /// beyond ``copyLimit``.
    func subtree(app: String, at path: FilePath) async throws -> [FileEntry] {
        let (low, high) = Self.below(path)
        let rows = try await database.query(
            """
            SELECT \(unescaped: Self.columns) FROM files.entries
            WHERE app_id = \(app) AND (path = \(path.description) OR (path >= \(low) AND path < \(high)))
            ORDER BY path LIMIT \(Self.copyLimit + 1)
            """, logger: logger)
        var entries: [FileEntry] = []
        for try await row in rows { entries.append(try Self.entry(row)) }
        guard !entries.isEmpty, !path.isRoot else { throw FileError.sourceNotFound(path.description) }
        guard entries.count <= Self.copyLimit else {
            throw FileError.invalidBody("A copy takes at most \(Self.copyLimit) files and directories")
        }
        return entries
    }

    /// Records `copies` (already stored under their new keys), creating missing directories
    /// above the first; 6018 when its path exists.
    func insert(copies: [FileEntry], app: String, owner: String?) async throws {
        guard let top = copies.first else { return }
        try await mappingConflicts(at: top.path) { connection in
            try await Self.ensureDirectories(top.path.ancestors, app: app, owner: owner, on: connection, logger: logger)
            try await requireVacant(top.path, app: app, on: connection)
            let now = Self.now()
            // Arrays cannot hold NULL here: empty strings stand for it.
            try await connection.run(
                """
                INSERT INTO files.entries
                    (app_id, path, parent, name, is_directory, size, content_type, storage_key, created, updated, owner_id)
                SELECT \(app), p, pa, n, d, s, NULLIF(t, ''), NULLIF(k, ''), \(now), \(now), \(owner)
                FROM unnest(\(copies.map(\.path.description))::text[], \(copies.map(\.path.parent.description))::text[],
                    \(copies.map(\.path.name))::text[], \(copies.map(\.isDirectory))::boolean[], \(copies.map(\.size))::bigint[],
                    \(copies.map { $0.contentType ?? "" })::text[], \(copies.map { $0.storageKey ?? "" })::text[]) AS c(p, pa, n, d, s, t, k)
                """, logger: logger)
        }
    }

    /// Appends bytes to the file at `path` (creating it when missing): under the path's lock,
    /// `compose` stores the current object (nil for a new file) followed by the addition as a
    /// new object, which replaces it; the old one becomes garbage. 6003 for a directory.
    func append(
        app: String, path: FilePath, owner: String?, compose: (_ current: String?) async throws -> StoredFile
    ) async throws {
        try await transaction { connection in
            try await Self.lock(path, app: app, on: connection, logger: logger)
            try await Self.ensureDirectories(path.ancestors, app: app, owner: owner, on: connection, logger: logger)
            // The row lock keeps a move, rename or delete of this file from landing between
            // reading its object and replacing it (the moved file would lose its bytes).
            let rows = try await connection.query(
                """
                SELECT is_directory, storage_key FROM files.entries
                WHERE app_id = \(app) AND path = \(path.description) FOR UPDATE
                """, logger: logger)
            var current: (isDirectory: Bool, key: String?)?
            for try await row in rows.decode((Bool, String?).self) { current = row }
            if current?.isDirectory == true { throw FileError.kindConflict(path.description, expected: "file") }
            let file = try await compose(current?.key)
            if let key = current?.key {
                try await replaceBytes(app: app, path: path, with: file, old: key, on: connection)
                return
            }
            // Something moved here meanwhile stays; the append is refused (and may be retried).
            guard try await insertFile(app: app, path: path, file: file, owner: owner, on: connection) else {
                throw FileError.targetExists(path.description)
            }
        }
    }

    /// A transaction whose unique violations mean something arrived at `path` meanwhile: 6018.
    private func mappingConflicts(at path: FilePath, _ body: (PostgresConnection) async throws -> Void) async throws {
        do {
            try await transaction(body)
        } catch let error as PSQLError where error.isUniqueViolation {
            throw FileError.targetExists(path.description)
        }
    }

    /// Locks the row at `path` for an update or delete of its subtree; `missing` when there is
    /// none.
    func lockEntry(_ path: FilePath, app: String, on connection: PostgresConnection, missing: ErrorEnvelope)
        async throws
    {
        let rows = try await connection.query(
            "SELECT 1 FROM files.entries WHERE app_id = \(app) AND path = \(path.description) FOR UPDATE",
            logger: logger)
        for try await _ in rows { return }
        throw missing
    }

    /// 6018 when anything is at `path`.
    func requireVacant(_ path: FilePath, app: String, on connection: PostgresConnection) async throws {
        let rows = try await connection.query(
            "SELECT 1 FROM files.entries WHERE app_id = \(app) AND path = \(path.description)", logger: logger)
        for try await _ in rows { throw FileError.targetExists(path.description) }
    }
}
