import InternalProtocol
import Logging
import PostgresNIO

/// Turns PostgreSQL's refusals of client-caused statements into client errors with messages this
/// project wrote: the server's message, detail, constraint and column names go to the log with
/// the request id, never to the client. Anything not listed stays an internal error (logged,
/// answered 500 without details).
enum DatabaseErrors {
    /// The client error for `error`, or `error` itself.
    static func map(_ error: any Error, table: String, logger: Logger) -> any Error {
        guard let psql = error as? PSQLError, let state = psql.serverInfo?[.sqlState] else { return error }
        let mapped = clientError(state: state, psql: psql, table: table)
        if mapped != nil {
            logger.debug(
                "statement refused",
                metadata: [
                    "sqlstate": "\(state)", "message": "\(psql.serverInfo?[.message] ?? "")",
                    "detail": "\(psql.serverInfo?[.detail] ?? "")",
                ])
        }
        return mapped ?? error
    }

    private static func clientError(state: String, psql: PSQLError, table: String) -> ErrorEnvelope? {
        switch state {
        case "23505" where psql.serverInfo?[.constraintName]?.hasSuffix("_pkey") == true:
            return DataError.objectExists
        case "23505": return DataError.duplicateValue
        case "23502": return DataError.requiredValueMissing
        case "23514", "23P01", "23001", "23503": return DataError.constraintViolated
        case "42P01": return DataError.tableNotFound(table)
        case "42703": return DataError.invalidQuery("The query names a property the table does not have")
        case "42803", "42P10", "42P18":
            return DataError.invalidQuery("Invalid query: an aggregate, grouping or ordering that cannot be computed")
        case "42883", "42804", "42725", "42846":
            return DataError.invalidQuery(
                "Invalid query: an operator or function does not apply to the property's type")
        case "22012": return DataError.invalidQuery("Invalid value: the query divides by zero for some object")
        case _ where state.hasPrefix("22"):
            return DataError.invalidQuery("Invalid value: a value is out of range or not of the property's type")
        case "54001": return DataError.queryTooComplex("The query is too complex")
        // An index row or a row over PostgreSQL's page limits: the value, not the server, is at fault.
        case "54000":
            return DataError.invalidQuery(
                "Invalid value: a value is too large to be stored or indexed (or the object as a whole is)")
        case "57014": return DataError.statementTimedOut
        case "54011": return DataError.columnLimit("Table '\(table)' cannot hold more columns")
        case "40001", "40P01": return DataError.transactionConflict
        default: return nil
        }
    }
}
