import InternalProtocol
import PostgresNIO

/// Turns PostgreSQL's refusals of client-caused statements into client errors. Anything not
/// listed stays an internal error (logged, answered 500 without details).
enum DatabaseErrors {
    /// The client error for `error`, or `error` itself.
    static func map(_ error: any Error, table: String) -> any Error {
        guard let psql = error as? PSQLError, let state = psql.serverInfo?[.sqlState] else { return error }
        let detail = psql.serverInfo?[.detail] ?? psql.serverInfo?[.message] ?? ""
        let message = psql.serverInfo?[.message] ?? "invalid statement"
        switch state {
        case "23505" where psql.serverInfo?[.constraintName]?.hasSuffix("_pkey") == true:
            return DataError.objectExists(detail)
        case "23505": return DataError.duplicateValue(detail)
        case "23502": return DataError.requiredMissing(psql.serverInfo?[.columnName] ?? "?")
        case "42P01": return DataError.tableNotFound(table)
        case "42703": return DataError.invalidQuery(message)
        case "42803", "42883", "42804", "42P10", "42725", "42P18", "42846":
            return DataError.invalidQuery("Invalid query: \(message)")
        case _ where state.hasPrefix("22"):
            return DataError.invalidQuery("Invalid value: \(message)")
        case "54001": return DataError.queryTooComplex("The query is too complex")
        case "40001", "40P01": return DataError.transactionConflict(message)
        default: return error
        }
    }
}
