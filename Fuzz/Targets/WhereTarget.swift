import InternalProtocol
import QueryLanguage

@testable import DataEngine

/// Where clauses as clients send them: the text is parsed, written back as BQL (which must parse
/// to the same tree, as change events rely on), compiled to SQL over ``table`` (relation paths
/// included) and to an in-memory predicate evaluated on ``objects``. The property list, sort and
/// BQL parsers read the same text.
enum WhereTarget {
    /// A table with a column of every type a where clause can meet, and relations to itself and
    /// to ``address``.
    static let table = TableSchema(
        name: "Person",
        columns: ColumnSchema.system + [
            ColumnSchema(name: "name", type: .string), ColumnSchema(name: "bio", type: .text),
            ColumnSchema(name: "motto", type: .extendedString), ColumnSchema(name: "age", type: .int),
            ColumnSchema(name: "score", type: .double), ColumnSchema(name: "active", type: .boolean),
            ColumnSchema(name: "born", type: .datetime), ColumnSchema(name: "tags", type: .json),
            ColumnSchema(name: "serial", type: .autoIncrement), ColumnSchema(name: "photo", type: .fileReference),
        ],
        relations: [
            RelationSchema(name: "friends", relatedTable: "Person", isMany: true, linkTable: "Person_friends"),
            RelationSchema(name: "address", relatedTable: "Address", isMany: false, linkTable: "Person_address"),
        ])

    /// The table at the end of ``table``'s `address` relation.
    static let address = TableSchema(
        name: "Address",
        columns: ColumnSchema.system + [
            ColumnSchema(name: "city", type: .string), ColumnSchema(name: "zip", type: .int),
        ])

    /// How relation paths (`address.city`, `Person[friends].age`) reach the related tables, for a
    /// signed-in user under the default permissions.
    static let relations = RelationPaths(
        catalog: AppCatalog(appID: "F0221E5", tables: ["person": table, "address": address]), access: AccessControl(),
        identity: Identity(appId: "F0221E5", keyKind: .rest, userId: "U1", roles: ["AuthenticatedUser", "RestUser"]))

    /// Objects as REST renders them, with the extremes a column can hold.
    static let objects: [JSONObject] = [
        JSONObject([
            ("objectId", .string("A1")), ("created", .integer(1_700_000_000_000)), ("name", .string("Joe")),
            ("bio", .string("likes 100% cotton_")), ("age", .integer(42)), ("score", .number(4.5)),
            ("active", .bool(true)),
            ("born", .integer(0)), ("serial", .integer(1)),
        ]),
        JSONObject([
            ("objectId", .string("")), ("name", .string("é\u{301}ß\u{1F600}")), ("age", .integer(.min)),
            ("score", .number(-1.7976931348623157e308)), ("born", .integer(.max)), ("serial", .integer(.max)),
            ("motto", .string(String(repeating: "%_", count: 64))),
        ]),
        JSONObject([
            ("age", .number(2.5)), ("score", .integer(.max)), ("born", .number(1e300)), ("active", .string("true")),
        ]),
        JSONObject(),
    ]

    /// Parses one input as a where clause (and its neighbours) and runs what parses.
    static func run(_ input: [UInt8]) {
        let text = String(decoding: input, as: UTF8.self)
        _ = try? QueryParser.selectItem(text)
        _ = try? QueryParser.sortItem(text)
        _ = try? BQL.query(text)
        guard let condition = try? QueryParser.condition(text) else { return }
        if !namesAKeyword(condition) { checkRoundTrip(condition) }
        var sql = SQL("SELECT 1 FROM t WHERE ")
        try? ExpressionCompiler(table: table, relations: relations).condition(condition, into: &sql)
        guard let predicate = try? ObjectPredicate(condition, table: table) else { return }
        for object in objects { _ = predicate.matches(object) }
    }

    /// Limits the written text is read back under: writing adds parentheses and quotes, so a
    /// clause near the standard limits may legitimately exceed them once written.
    static let roomyLimits = QueryLimits(
        maximumLength: .max, maximumDepth: 1_000, maximumTokens: .max, maximumListItems: .max,
        maximumPatternWildcards: .max, maximumPatternLength: .max)

    /// The words the grammar reserves somewhere (upper-cased).
    static let keywords: Set<String> = [
        "AFTER", "AND", "AS", "ASC", "AT", "BEFORE", "BETWEEN", "DESC", "FALSE", "IN", "IS", "LIKE", "NOT", "NULL",
        "OR", "TRUE",
    ]

    /// Whether a property or function of `condition` is named like a keyword. Such a name reads
    /// as a name in one place and as the keyword in another (`age = not / 9` parses, its text
    /// `(age = (not / 9))` does not), quoted or not, since the lexer does not tell them apart:
    /// those texts are not expected to read back.
    private static func namesAKeyword(_ condition: Condition) -> Bool {
        var found = false
        _ = condition.mappingValues { value in
            switch value {
            case .property(let path):
                let names = path.segments + [path.inverse?.table, path.inverse?.column].compactMap { $0 }
                found = found || names.contains { keywords.contains($0.uppercased()) }
            case .function(let name, _): found = found || keywords.contains(name.uppercased())
            default: break
            }
            return value
        }
        return found
    }

    /// ``Condition/text`` must parse back to the condition it was written from (a constant, written
    /// `true = true`, reads back as that comparison) and write the same text again.
    private static func checkRoundTrip(_ condition: Condition) {
        let written = condition.text
        do {
            let reparsed = try QueryParser.condition(written, limits: roomyLimits)
            guard withConstants(reparsed) == withConstants(condition) else {
                preconditionFailure("'\(written)' parses to \(reparsed), not to \(condition)")
            }
            guard reparsed.text == written else {
                preconditionFailure("'\(written)' is written back as '\(reparsed.text)'")
            }
        } catch {
            preconditionFailure("'\(written)', written from \(condition), does not parse: \(error)")
        }
    }

    /// `condition` with each comparison of two boolean literals as the constant it stands for.
    private static func withConstants(_ condition: Condition) -> Condition {
        switch condition {
        case .and(let items): .and(items.map(withConstants))
        case .or(let items): .or(items.map(withConstants))
        case .not(let inner): .not(withConstants(inner))
        case .comparison(.boolean(let left), .equal, .boolean(let right)): .constant(left == right)
        default: condition
        }
    }
}
