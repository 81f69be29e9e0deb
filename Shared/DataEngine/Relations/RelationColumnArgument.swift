import InternalProtocol
import QueryLanguage

/// The relation argument of the relation API: `column`, or `column:ChildTable:1|n`, which also
/// declares the column when it does not exist yet (`column:ChildTable` declares a 1:1).
package struct RelationColumnArgument: Sendable, Equatable {
    /// The relation column's name.
    package var column: String
    /// The declared child table, if any.
    package var childTable: String?
    /// The declared cardinality (1:N when true), if any.
    package var isMany: Bool?

    /// Parses `text`; 1020 for a name that is not an identifier, 1027 for another shape.
    package init(_ text: String) throws {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        guard (1...3).contains(parts.count) else {
            throw DataError.invalidRelation("'\(text)' is not column or column:Table:1|n")
        }
        column = parts[0]
        guard Identifier.isValid(column) else { throw DataError.invalidName(column) }
        guard parts.count > 1 else { return }
        guard Identifier.isValid(parts[1]) else { throw DataError.invalidName(parts[1]) }
        childTable = parts[1]
        // `column:Table` (no cardinality) declares a 1:1 but matches a column of either kind.
        guard parts.count == 3 else { return }
        guard let many = Self.isMany(parts[2]) else {
            throw DataError.invalidRelation("The cardinality in '\(text)' must be 1 or n")
        }
        isMany = many
    }

    /// Whether a cardinality names many children (`n`, `1:n`, `ONE_TO_MANY`) or one (`1`, `1:1`,
    /// `ONE_TO_ONE`); nil for anything else.
    package static func isMany(_ cardinality: String) -> Bool? {
        switch cardinality.uppercased() {
        case "N", "1:N", "ONE_TO_MANY", "MANY": true
        case "1", "1:1", "ONE_TO_ONE", "ONE": false
        default: nil
        }
    }

    /// The column to create when it does not exist, if the argument declares one.
    var definition: RelationDefinition? {
        guard let childTable else { return nil }
        return RelationDefinition(name: column, relatedTable: childTable, isMany: isMany ?? false)
    }
}

/// Which children a relation change names: objects by id, in the order given, or every object of
/// the child table a where clause matches.
package enum RelationChildren: Sendable {
    case ids([String])
    case matching(Condition)

    /// The most ids one request may name.
    package static let idLimit = 1_000

    /// Ids from a JSON array of strings, numbers or objects carrying `objectId` (1022 for anything
    /// else; 1021 beyond ``idLimit``, checked before any item is read).
    package init(body: JSONValue) throws {
        guard let items = body.array else {
            throw DataError.invalidBody("The body must be an array of child objectIds, or use ?whereClause=")
        }
        guard items.count <= Self.idLimit else { throw DataError.bulkLimit(Self.idLimit) }
        self = .ids(
            try items.map { item in
                switch item {
                case .string(let id) where !id.isEmpty: return id
                case .integer(let number): return String(number)
                case .object(let object) where !(object["objectId"]?.string ?? "").isEmpty:
                    return object["objectId"]?.string ?? ""
                default: throw DataError.invalidBody("Child objects are given as objectIds (strings or numbers)")
                }
            })
    }
}
