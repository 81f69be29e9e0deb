import Foundation

/// A relation column to create: on `relatedTable`, one or many children, loaded by every find
/// or only when asked.
package struct RelationDefinition: Sendable, Hashable {
    /// The column name.
    package var name: String
    /// The child table.
    package var relatedTable: String
    /// 1:N when true.
    package var isMany: Bool
    /// Whether every find loads it.
    package var autoLoad = false

    /// Creates a definition.
    package init(name: String, relatedTable: String, isMany: Bool, autoLoad: Bool = false) {
        self.name = name
        self.relatedTable = relatedTable
        self.isMany = isMany
        self.autoLoad = autoLoad
    }
}

/// Relation columns' DDL, run inside a ``SchemaEditor`` change: each relation is a link table in
/// the app's schema whose foreign keys cascade from both objects, so deleting a parent removes its
/// links and deleting a child removes it from every relation, never the other object.
extension SchemaEditor {
    /// Creates the link table of `definition` on `table` and records the column; the child table
    /// must exist (1009 otherwise) and the name must be free (1024).
    static func addRelation(
        _ definition: RelationDefinition, table: TableSchema, catalog: AppCatalog, session: DatabaseSession
    )
        async throws
    {
        guard Identifier.isValid(definition.name) else { throw DataError.invalidName(definition.name) }
        try table.requireWritable()
        let child: TableSchema
        if let existing = catalog.table(named: definition.relatedTable) {
            child = existing
        } else if GeoPointTable.isNamed(definition.relatedTable) {
            try await GeoPointTable.create(catalog: catalog, session: session)
            child = GeoPointTable.schema
        } else {
            throw DataError.tableNotFound(definition.relatedTable)
        }
        guard !table.hasProperty(named: definition.name) else {
            throw DataError.schemaConflict("Column '\(definition.name)' already exists in table '\(table.name)'")
        }
        try ColumnLimits.checkRelation(table)
        // A fresh name each time: a renamed relation keeps its link table, and its old name may be declared again.
        let link = hashedName("rl", table: table.name, column: definition.name + "\u{0}" + UUID().uuidString)
        var create = SQL("CREATE TABLE ")
        create.table(catalog.schemaName, link)
        create.append(" (\"parent\" text NOT NULL REFERENCES ")
        create.table(catalog.schemaName, table.name)
        create.append(" (\"objectId\") ON DELETE CASCADE, \"child\" text NOT NULL REFERENCES ")
        // A view has no key to reference: links to geo points reference the points themselves.
        if child.isGeoPoints {
            create.append("geo.points (\"object_id\")")
        } else {
            create.table(catalog.schemaName, child.name)
            create.append(" (\"objectId\")")
        }
        create.append(
            """
             ON DELETE CASCADE, "position" bigint GENERATED ALWAYS AS IDENTITY,
             PRIMARY KEY ("parent", "child"))
            """)
        _ = try await session.rows(create)
        // Children's parents (inverse paths, deletes), and each parent's children in link order;
        // a 1:1 parent holds one link at most.
        let indexes: [(columns: String, unique: Bool)] = [
            ("\"child\", \"parent\"", false),
            definition.isMany ? ("\"parent\", \"position\"", false) : ("\"parent\"", true),
        ]
        for (columns, unique) in indexes {
            var index = SQL(unique ? "CREATE UNIQUE INDEX ON " : "CREATE INDEX ON ")
            index.table(catalog.schemaName, link)
            index.append(" (\(columns))")
            _ = try await session.rows(index)
        }
        var record = SQL(
            "INSERT INTO data.columns (app_id, table_name, name, type, related_table, cardinality, auto_load, link_table) VALUES ("
        )
        record.bind(all: [
            .text(catalog.appID), .text(table.name), .text(definition.name), .text(ColumnType.relation.rawValue),
            .text(child.name), .text(definition.isMany ? "n" : "1"), .boolean(definition.autoLoad), .text(link),
        ])
        record.append(")")
        _ = try await session.rows(record)
    }

    /// Drops a relation column's link table and its catalog row.
    static func dropRelation(_ relation: RelationSchema, table: String, catalog: AppCatalog, session: DatabaseSession)
        async throws
    {
        var drop = SQL("DROP TABLE ")
        drop.table(catalog.schemaName, relation.linkTable)
        _ = try await session.rows(drop)
        var record = SQL("DELETE FROM data.columns")
        whereColumn(appID: catalog.appID, table: table, column: relation.name, into: &record)
        _ = try await session.rows(record)
    }

    /// Drops every relation of `table` and every relation of another table that points at it
    /// (their link tables reference its rows).
    static func dropRelations(touching table: TableSchema, catalog: AppCatalog, session: DatabaseSession) async throws {
        for owner in catalog.tables.values {
            for relation in owner.relations
            where owner.name == table.name || relation.relatedTable.lowercased() == table.name.lowercased() {
                try await dropRelation(relation, table: owner.name, catalog: catalog, session: session)
            }
        }
    }
}
