import InternalProtocol
import PostgresNIO

extension FileCatalog {
    /// The resized copy `rendition` of the object `original`, if one was made.
    func rendition(of original: String, _ rendition: String) async throws -> StoredFile? {
        let rows = try await database.query(
            """
            SELECT storage_key, size, content_type FROM files.renditions
            WHERE original_key = \(original) AND rendition = \(rendition)
            """, logger: logger)
        for try await (key, size, type) in rows.decode((String, Int64, String).self) {
            return StoredFile(key: key, size: size, contentType: type)
        }
        return nil
    }

    /// Records `copy` as rendition `rendition` of the object of the file at `path`, when that
    /// file still holds `original`, no copy was recorded meanwhile and fewer than `limit` are. The file's row is share
    /// locked, so a change of its bytes either waits for this and then discards the copy with
    /// the original, or lands first and this records nothing. Answers whether it was recorded
    /// (if not, the copy is the caller's to discard).
    func addRendition(
        app: String, path: FilePath, original: String, _ rendition: String, copy: StoredFile, limit: Int
    ) async throws -> Bool {
        try await transaction { connection in
            let rows = try await connection.query(
                """
                SELECT 1 FROM files.entries
                WHERE app_id = \(app) AND path = \(path.description) AND storage_key = \(original) FOR SHARE
                """, logger: logger)
            var current = false
            for try await _ in rows { current = true }
            guard current else { return false }
            // Resizes running at once may each find room: the cap holds within the gate's width.
            let inserted = try await connection.query(
                """
                INSERT INTO files.renditions (original_key, rendition, storage_key, size, content_type)
                SELECT \(original), \(rendition), \(copy.key), \(copy.size), \(copy.contentType)
                WHERE (SELECT count(*) FROM files.renditions WHERE original_key = \(original)) < \(limit)
                ON CONFLICT DO NOTHING RETURNING 1
                """, logger: logger)
            for try await _ in inserted { return true }
            return false
        }
    }
}
