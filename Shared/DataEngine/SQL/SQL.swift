import Foundation
import PostgresNIO

/// A value bound to a statement parameter, with the SQL type it is cast to.
package enum SQLValue: Sendable, Hashable {
    case text(String)
    case integer(Int64)
    case double(Double)
    case boolean(Bool)
    case timestamp(Date)
    case json(String)
    /// A `text[]` array (an ordered id list bound as one parameter).
    case textArray([String])
    /// NULL of the given SQL type (`text`, `bigint`, …).
    case null(String)

    var castType: String {
        switch self {
        case .text: "text"
        case .integer: "bigint"
        case .double: "double precision"
        case .boolean: "boolean"
        case .timestamp: "timestamptz"
        case .json: "jsonb"
        case .textArray: "text[]"
        case .null(let type): type
        }
    }

    /// The type the value is sent as (before its cast); NULL leaves it to the cast.
    var bindingType: PostgresDataType {
        switch self {
        case .text, .json: .text
        case .integer: .int8
        case .double: .float8
        case .boolean: .bool
        case .timestamp: .timestamptz
        case .textArray: .textArray
        case .null: .null
        }
    }
}

/// A statement under construction: trusted SQL text from the engine, identifiers quoted by
/// ``identifier(_:)``, and every client value bound through ``bind(_:)`` — never spliced.
package struct SQL: Sendable {
    /// The statement text with `$n` placeholders.
    package private(set) var text = ""
    /// The bound values, in placeholder order.
    package private(set) var bindings = PostgresBindings()
    /// The types the bound values are sent as, in placeholder order.
    package private(set) var bindingTypes: [PostgresDataType] = []
    /// Whether the best plan depends on the bound values (a `LIKE` pattern, a PostGIS function):
    /// such a statement runs unnamed, since PostgreSQL may settle a prepared one on a generic plan
    /// (a radius search prepared that way cost ten times the CPU of its custom plan).
    package private(set) var isPlanSensitive = false

    /// An empty statement.
    package init() {}

    /// A statement starting with trusted text.
    package init(_ text: String) {
        self.text = text
    }

    /// Marks the statement as one whose plan depends on its values (see ``isPlanSensitive``).
    package mutating func markPlanSensitive() {
        isPlanSensitive = true
    }

    /// Appends trusted SQL text written by the engine (never client input).
    package mutating func append(_ trusted: String) {
        text += trusted
    }

    /// Appends `name` as a quoted identifier. Callers validate names against the catalog or
    /// ``Identifier`` first; quoting keeps even a hostile name inert.
    package mutating func identifier(_ name: String) {
        text += Self.quoted(name)
    }

    /// Appends `schema.table` quoted.
    package mutating func table(_ schema: String, _ name: String) {
        text += Self.quoted(schema) + "." + Self.quoted(name)
    }

    /// Binds `value` as the next parameter, cast to its SQL type.
    package mutating func bind(_ value: SQLValue) {
        switch value {
        case .text(let string), .json(let string): bindings.append(string)
        case .integer(let integer): bindings.append(integer)
        case .double(let double): bindings.append(double)
        case .boolean(let bool): bindings.append(bool)
        // Callers refuse out-of-range dates first; clamping here keeps a missed one from trapping.
        case .timestamp(let date): bindings.append(TimestampRange.clamped(date))
        case .textArray(let strings): bindings.append(strings)
        case .null: bindings.appendNull()
        }
        bindingTypes.append(value.bindingType)
        text += "$\(bindings.count)::\(value.castType)"
    }

    /// Binds `values` as parameters separated by commas (a `VALUES` row, an `IN` list).
    package mutating func bind(all values: [SQLValue]) {
        list(values) { sql, value in sql.bind(value) }
    }

    /// Appends `items` separated by `separator`, each written by `write`.
    package mutating func list<Item>(
        _ items: some Sequence<Item>, separator: String = ", ", _ write: (inout SQL, Item) throws -> Void
    ) rethrows {
        var first = true
        for item in items {
            if !first { text += separator }
            first = false
            try write(&self, item)
        }
    }

    /// `(a AND b …)` or `(a OR b …)`, each item written by `write`; an empty list is the
    /// junction's identity (`TRUE` for AND, `FALSE` for OR).
    package mutating func junction<Item, Failure: Error>(
        _ items: [Item], _ word: String, _ write: (inout SQL, Item) throws(Failure) -> Void
    ) throws(Failure) {
        guard !items.isEmpty else { return append(word == "AND" ? "TRUE" : "FALSE") }
        append("(")
        for (offset, item) in items.enumerated() {
            if offset > 0 { append(" \(word) ") }
            try write(&self, item)
        }
        append(")")
    }

    /// The statement for PostgresNIO.
    package var query: PostgresQuery {
        PostgresQuery(unsafeSQL: text, binds: bindings)
    }

    /// `name` double-quoted with embedded quotes doubled.
    package static func quoted(_ name: String) -> String {
        // Byte-wise: Foundation's string replacement was 4 % of data-service's CPU per request.
        guard name.utf8.contains(UInt8(ascii: "\"")) else { return "\"" + name + "\"" }
        var quoted = "\""
        for character in name {
            quoted.append(character)
            if character == "\"" { quoted.append("\"") }
        }
        return quoted + "\""
    }
}

/// Names clients may give tables and columns.
package enum Identifier {
    /// A letter, then up to 62 letters, digits or underscores (PostgreSQL's 63-byte limit); or
    /// QuickBlox's `_parent_id`.
    package static func isValid(_ name: String) -> Bool {
        if name == ParentReference.column { return true }
        guard let first = name.unicodeScalars.first, name.utf8.count <= 63,
            ("a"..."z").contains(first) || ("A"..."Z").contains(first)
        else { return false }
        return name.unicodeScalars.allSatisfy {
            ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "_"
        }
    }
}

/// QuickBlox's parent reference: a child names its parent's id in `_parent_id`, and deleting the
/// parent deletes the child (see ``CatalogMigrations``' `data.delete_children`).
package enum ParentReference {
    /// The column's name.
    package static let column = "_parent_id"

    /// Whether any table of `catalog` has the column, so deletes must cascade.
    static func isUsed(in catalog: AppCatalog) -> Bool {
        catalog.tables.values.contains { $0.column(named: column) != nil }
    }
}

/// Where a delete's `_parent_id` children go too: the app's schema and the tables with the
/// column whose every row the caller may remove (children in other tables stay, their
/// `_parent_id` naming a deleted object).
struct ParentCascade {
    let schema: String
    let tables: [String]
}
