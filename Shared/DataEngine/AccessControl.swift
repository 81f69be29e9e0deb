import InternalProtocol

/// What a caller may do with a table.
public enum DataOperation: String, Sendable {
    case create = "Create"
    case find = "Find"
    case update = "Update"
    case remove = "Remove"
    case describe = "Describe"
    /// Creating and altering tables and columns explicitly, and app data settings.
    case schema = "Schema"
}

/// An allowed operation, optionally restricted to the rows a SQL predicate admits.
public struct AccessGrant: Sendable {
    /// Writes a boolean SQL expression over the row alias; nil admits every row.
    public let rowFilter: (@Sendable (inout SQL, _ rowAlias: String) -> Void)?

    /// Every row.
    public static let allRows = AccessGrant(rowFilter: nil)
}

/// The single authorization seam of the data engine: every read and write asks it first and
/// applies the returned row filter in SQL. For now it distinguishes only the server-code key
/// (which alone may change schemas); the security model fills in roles, table permissions,
/// owner policy and ACLs here without touching the query paths.
public struct AccessControl: Sendable {
    /// Creates the policy.
    public init() {}

    /// Allows `operation` on `table` for `identity` (with a row filter) or throws 1023 / 403.
    public func authorize(_ identity: Identity, _ operation: DataOperation, table: String) throws
        -> AccessGrant
    {
        if operation == .schema && identity.keyKind != .serverCode {
            throw DataError.permissionDenied(operation.rawValue, table: table)
        }
        return .allRows
    }
}
