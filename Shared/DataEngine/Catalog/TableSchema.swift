import Permissions

/// One column of an app table as the catalog records it.
package struct ColumnSchema: Sendable, Hashable {
    /// The column name as first written (the SQL identifier, quoted).
    package var name: String
    /// The Backendless type.
    package var type: ColumnType
    /// NOT NULL.
    package var required: Bool = false
    /// UNIQUE.
    package var unique: Bool = false
    /// Has an index of its own.
    package var indexed: Bool = false
    /// The value a save without this property stores.
    package var defaultValue: JSONValue?
    /// The four system columns every table has.
    package var isSystem: Bool = false

    /// Creates a column description.
    package init(
        name: String, type: ColumnType, required: Bool = false, unique: Bool = false, indexed: Bool = false,
        defaultValue: JSONValue? = nil, isSystem: Bool = false
    ) {
        self.name = name
        self.type = type
        self.required = required
        self.unique = unique
        self.indexed = indexed
        self.defaultValue = defaultValue
        self.isSystem = isSystem
    }

    /// The system columns, in wire order.
    package static let system: [ColumnSchema] = [
        ColumnSchema(name: "objectId", type: .stringID, isSystem: true),
        ColumnSchema(name: "created", type: .datetime, isSystem: true),
        ColumnSchema(name: "updated", type: .datetime, isSystem: true),
        ColumnSchema(name: "ownerId", type: .string, isSystem: true),
    ]
}

/// One app table: its name, its columns in creation order and its relation columns.
package struct TableSchema: Sendable, Hashable {
    /// The table name as first written.
    package var name: String
    /// System columns first, then user columns in the order they were added.
    package var columns: [ColumnSchema]
    /// Relation columns (no SQL column: each keeps its links in a link table).
    package var relations: [RelationSchema] = []
    /// Whether this is the app's read-only view of geo-service's points (``GeoPointTable``).
    package var isGeoPoints = false

    /// Creates a table description.
    package init(name: String, columns: [ColumnSchema], relations: [RelationSchema] = []) {
        self.name = name
        self.columns = columns
        self.relations = relations
    }

    /// The relation column named `name`, matched exactly first and then ignoring case.
    package func relation(named name: String) -> RelationSchema? {
        if let exact = relations.first(where: { $0.name == name }) { return exact }
        let key = name.lowercased()
        return relations.first { $0.name.lowercased() == key }
    }

    /// How many columns and relation columns it has together.
    package var propertyCount: Int { columns.count + relations.count }

    /// Whether a column or relation column is called `name` (ignoring case): they share one namespace.
    package func hasProperty(named name: String) -> Bool {
        column(named: name) != nil || relation(named: name) != nil
    }

    /// The column named `name`, matched exactly first and then ignoring case (Backendless
    /// names are case-insensitive; a client may write `Coordinates` for `coordinates`).
    package func column(named name: String) -> ColumnSchema? {
        if let exact = columns.first(where: { $0.name == name }) { return exact }
        let key = name.lowercased()
        return columns.first { $0.name.lowercased() == key }
    }
}

/// A relation column: the parent table's link to objects of `relatedTable`, one (1:1) or many
/// (1:N), kept in its own link table in the app's schema (`parent`, `child`, `position`), whose
/// foreign keys remove links with either object.
package struct RelationSchema: Sendable, Hashable {
    /// The column name as first written.
    package var name: String
    /// The child table's name as the catalog spells it.
    package var relatedTable: String
    /// 1:N when true, 1:1 when false.
    package var isMany: Bool
    /// Whether every find loads it.
    package var autoLoad: Bool = false
    /// The link table's name in the app's schema.
    package var linkTable: String

    /// Creates a relation description.
    package init(name: String, relatedTable: String, isMany: Bool, autoLoad: Bool = false, linkTable: String) {
        self.name = name
        self.relatedTable = relatedTable
        self.isMany = isMany
        self.autoLoad = autoLoad
        self.linkTable = linkTable
    }

    /// The cardinality as the column argument writes it: `1` or `n`.
    package var cardinality: String { isMany ? "n" : "1" }
}

/// Everything the data engine knows about one app's tables, read once and cached.
package struct AppCatalog: Sendable {
    /// The app.
    package let appID: String
    /// Whether saves may create tables and columns.
    package var dynamicSchema: Bool
    /// Tables by lower-cased name.
    package var tables: [String: TableSchema]
    /// The app's catalog version: bumped by every schema or permission change (0 before the first).
    package var version: Int64 = 0
    /// Global and table permissions and owner policies (object ACLs stay in SQL).
    package var permissions = PermissionRules()

    /// Creates a catalog.
    package init(appID: String, dynamicSchema: Bool = true, tables: [String: TableSchema] = [:]) {
        self.appID = appID
        self.dynamicSchema = dynamicSchema
        self.tables = tables
    }

    /// The table named `name`, ignoring case.
    package func table(named name: String) -> TableSchema? {
        tables[name.lowercased()]
    }

    /// The PostgreSQL schema that holds the app's tables.
    package var schemaName: String { AppCatalog.schemaName(for: appID) }

    /// `app_` and the app id's hex digits, lower-cased.
    package static func schemaName(for appID: String) -> String {
        "app_" + appID.lowercased().filter { $0.isHexDigit }
    }
}
