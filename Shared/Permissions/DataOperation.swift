/// An operation the security model grants or denies. Each service names its own: data's are
/// ``DataOperation``; files, messaging and geo name theirs (upload, publish, add a point…) and
/// reuse the cells, the oracle and the plan unchanged.
package protocol PermissionOperation: Hashable, Sendable, Codable, RawRepresentable where RawValue == String {}

/// What a caller may do with a table.
package enum DataOperation: String, PermissionOperation, CaseIterable {
    case create = "Create"
    case find = "Find"
    case update = "Update"
    case remove = "Remove"
    case describe = "Describe"
    /// Creating and altering tables and columns explicitly, and app data settings.
    case schema = "Schema"
    /// Changing an object's permissions.
    case permission = "Permission"
    /// Reading an object's related objects (the relation API's load).
    case loadRelations = "LoadRelations"
    /// Linking children to an object (set and add).
    case addRelation = "AddRelation"
    /// Unlinking children from an object (set and delete).
    case deleteRelation = "DeleteRelation"

    /// The name permission answers use: `FIND`, `CREATE`, …, `LOAD_RELATIONS`.
    package var permissionName: String {
        switch self {
        case .loadRelations: "LOAD_RELATIONS"
        case .addRelation: "ADD_RELATION"
        case .deleteRelation: "DELETE_RELATION"
        default: rawValue.uppercased()
        }
    }

    /// The operation a permission request names: `FIND`, `UPDATE`, `REMOVE`, `ADD` (or
    /// `CREATE`), `DESCRIBE`, `PERMISSION`, `LOAD_RELATIONS`, `ADD_RELATION`, `DELETE_RELATION`,
    /// in any case.
    package init?(permissionName name: String) {
        switch name.uppercased() {
        case "FIND": self = .find
        case "UPDATE": self = .update
        case "REMOVE", "DELETE": self = .remove
        case "ADD", "CREATE": self = .create
        case "DESCRIBE": self = .describe
        case "PERMISSION": self = .permission
        case "LOAD_RELATIONS", "LOADRELATIONS": self = .loadRelations
        case "ADD_RELATION", "ADDRELATION": self = .addRelation
        case "DELETE_RELATION", "DELETERELATION": self = .deleteRelation
        default: return nil
        }
    }
}
