import PostgresNIO

extension PSQLError {
    /// True when the statement broke a unique constraint (SQLSTATE 23505).
    package var isUniqueViolation: Bool { serverInfo?[.sqlState] == "23505" }
}
