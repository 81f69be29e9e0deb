import InternalProtocol

/// The app's `GeoPoint` table: a view in the app's schema over geo-service's `geo.points` rows
/// of that app, so relation columns can point at geo points (`location:GeoPoint:1`) and every
/// data path — loading relations, `coordinates.latitude` in where clauses, sorts, joins, the
/// caller's Find filter — reads them like any table. It is created with the first relation
/// that points at it; data writes never touch it (points change through `/geo/points`).
enum GeoPointTable {
    /// The table's name as relations and `___class` spell it.
    static let name = "GeoPoint"

    /// Whether `table` names the GeoPoint table (names ignore case).
    static func isNamed(_ table: String) -> Bool {
        table.lowercased() == name.lowercased()
    }

    /// Its columns after the system columns.
    static let columns: [ColumnSchema] = [
        ColumnSchema(name: "latitude", type: .double),
        ColumnSchema(name: "longitude", type: .double),
        ColumnSchema(name: "categories", type: .json),
        ColumnSchema(name: "metadata", type: .json),
    ]

    /// The table as the catalog describes it once created.
    static var schema: TableSchema {
        var table = TableSchema(name: name, columns: ColumnSchema.system + columns)
        table.isGeoPoints = true
        return table
    }

    /// Creates the view and records it in the catalog (inside a ``SchemaEditor`` change).
    static func create(catalog: AppCatalog, session: DatabaseSession) async throws {
        guard try await session.column(SQL("SELECT to_regclass('geo.points') IS NOT NULL"), as: Bool.self).first == true
        else {
            throw DataError.geoUnavailable
        }
        // DDL takes no parameters: the app id goes in as a literal, so it must be an id's characters only.
        guard !catalog.appID.isEmpty,
            catalog.appID.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") })
        else {
            throw ErrorEnvelope.internalError
        }
        try await session.execute("CREATE SCHEMA IF NOT EXISTS \(SQL.quoted(catalog.schemaName))")
        var view = SQL("CREATE VIEW ")
        view.table(catalog.schemaName, name)
        view.append(
            """
             AS SELECT p.object_id AS "objectId",
                timestamptz 'epoch' + p.created * interval '1 millisecond' AS "created",
                timestamptz 'epoch' + p.updated * interval '1 millisecond' AS "updated",
                p.owner_id AS "ownerId",
                public.ST_Y(p.location::public.geometry) AS "latitude",
                public.ST_X(p.location::public.geometry) AS "longitude",
                to_jsonb(p.categories) AS "categories",
                p.metadata AS "metadata"
             FROM geo.points p WHERE p.app_id = '\(catalog.appID)'
            """)
        _ = try await session.rows(view)
        var record = SQL("INSERT INTO data.tables (app_id, name, kind) VALUES (")
        record.bind(all: [.text(catalog.appID), .text(name), .text("geo")])
        record.append(")")
        _ = try await session.rows(record)
        for column in columns {
            var row = SQL("INSERT INTO data.columns (app_id, table_name, name, type) VALUES (")
            row.bind(all: [.text(catalog.appID), .text(name), .text(column.name), .text(column.type.rawValue)])
            row.append(")")
            _ = try await session.rows(row)
        }
    }
}

extension TableSchema {
    /// 1029 unless data writes may change this table (the GeoPoint table's rows are geo-service's).
    func requireWritable() throws {
        if isGeoPoints { throw DataError.geoPointsReadOnly }
    }
}
