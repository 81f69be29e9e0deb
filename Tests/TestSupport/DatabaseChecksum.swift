import PostgresNIO
import PostgresSupport

/// A digest of a cluster database's structure and app data: every column of every schema but
/// PostgreSQL's own (name, type, nullability, default), every index and constraint, and the rows
/// of every app's tables. Equal digests before and after a run mean the run changed neither.
package enum DatabaseChecksum {
    package static func of(_ database: DatabaseConfiguration) async throws -> String {
        try await PostgresClient.with(database, logger: TestDatabase.logger) { client in
            var parts: [String] = []
            for query: PostgresQuery in [
                """
                SELECT md5(coalesce(string_agg(concat_ws(':', table_schema, table_name, column_name, data_type,
                is_nullable, column_default), ',' ORDER BY table_schema, table_name, column_name), ''))
                FROM information_schema.columns WHERE table_schema NOT IN ('pg_catalog', 'information_schema')
                """,
                """
                SELECT md5(coalesce(string_agg(schemaname || '.' || indexdef, ',' ORDER BY schemaname, indexname), ''))
                FROM pg_indexes WHERE schemaname NOT IN ('pg_catalog', 'information_schema')
                """,
                """
                SELECT md5(coalesce(string_agg(conrelid::regclass::text || ':' || pg_get_constraintdef(oid), ','
                ORDER BY conrelid::regclass::text, conname), '')) FROM pg_constraint WHERE connamespace > 16384
                """,
            ] {
                for try await digest in try await client.query(query, logger: TestDatabase.logger).decode(String.self) {
                    parts.append(digest)
                }
            }
            parts.append(try await appRows(client))
            return parts.joined(separator: "-")
        }
    }

    /// Every app table's rows, each table's as one digest.
    private static func appRows(_ client: PostgresClient) async throws -> String {
        var tables: [(String, String)] = []
        let list: PostgresQuery = """
            SELECT table_schema, table_name FROM information_schema.tables
            WHERE table_schema LIKE 'app\\_%' AND table_type = 'BASE TABLE' ORDER BY 1, 2
            """
        for try await (schema, table) in try await client.query(list, logger: TestDatabase.logger).decode(
            (String, String).self)
        {
            tables.append((schema, table))
        }
        var digests: [String] = []
        for (schema, table) in tables {
            let name =
                "\"\(schema.replacingOccurrences(of: "\"", with: "\"\""))\".\"\(table.replacingOccurrences(of: "\"", with: "\"\""))\""
            let rows = PostgresQuery(
                unsafeSQL: "SELECT md5(coalesce(string_agg(t::text, '|' ORDER BY t::text), '')) FROM \(name) t")
            for try await digest in try await client.query(rows, logger: TestDatabase.logger).decode(String.self) {
                digests.append("\(table)=\(digest)")
            }
        }
        return digests.joined(separator: ",")
    }
}
