import InternalProtocol
import Permissions
import QueryLanguage

/// The data service's errors: Backendless codes and wording where the contract records them
/// (1000, 1009 and the typing messages), our own codes in the same 1000 range otherwise. The
/// README's error table lists them all.
package enum DataError {
    /// 1000, 404: no object with this id (the contract's message).
    package static func entityNotFound(_ id: String) -> ErrorEnvelope {
        ErrorEnvelope(code: 1000, message: "Entity with ID \(id) not found", status: 404)
    }

    /// 1009, 404: the table does not exist. The contract's message nests its own opening
    /// (`Table not found by name 'Table not found by name 'T'. …'`); this one says it once and
    /// names the table once, the same for every route and for a unit of work's operations.
    package static func tableNotFound(_ table: String) -> ErrorEnvelope {
        ErrorEnvelope(
            code: 1009,
            message: "Table not found by name '\(table)'. Make sure the client class referenced in the API call "
                + "has the same literal name as the table in Backendless console",
            status: 404)
    }

    /// 1011, 400: a query or schema call names a column the table lacks.
    package static func columnNotFound(_ column: String, table: String) -> ErrorEnvelope {
        ErrorEnvelope(code: 1011, message: "Column '\(column)' does not exist in table '\(table)'", status: 400)
    }

    /// 1011, 404: the column a schema route's path names does not exist (the path names a
    /// resource that is not there; elsewhere a missing column is a bad request).
    package static func namedColumnNotFound(_ column: String, table: String) -> ErrorEnvelope {
        var error = columnNotFound(column, table: table)
        error.status = 404
        return error
    }

    /// 1012, 400: values of the wrong type for existing columns (the contract's message).
    package static func invalidDataType(_ properties: [String]) -> ErrorEnvelope {
        ErrorEnvelope(
            code: 1012,
            message:
                "Unable to save object - invalid data type for properties - \(properties.joined(separator: ", ")). "
                + "You can change the property type in developer console.",
            status: 400)
    }

    /// 1013, 400: an unknown property while dynamic schema is off.
    package static func dynamicSchemaDisabled(_ properties: [String], table: String) -> ErrorEnvelope {
        ErrorEnvelope(
            code: 1013,
            message: "Unable to save object - unknown properties \(properties.joined(separator: ", ")) in table "
                + "'\(table)' and dynamic schema definition is disabled",
            status: 400)
    }

    /// 1014, 400: a required column without a value.
    /// 1014 when PostgreSQL finds a NOT NULL column without a value (its name stays in the log).
    package static let requiredValueMissing = ErrorEnvelope(
        code: 1014, message: "Unable to save object - a required property has no value", status: 400)

    package static func requiredMissing(_ column: String) -> ErrorEnvelope {
        ErrorEnvelope(
            code: 1014, message: "Unable to save object - required property '\(column)' has no value", status: 400)
    }

    /// 1015, 409: a unique column already holds the value.
    package static let duplicateValue = ErrorEnvelope(
        code: 1015, message: "Unable to save object - a unique property already has this value", status: 409)

    /// 1015 for any other constraint the value breaks.
    package static let constraintViolated = ErrorEnvelope(
        code: 1015, message: "Unable to save object - a value violates a constraint of the table", status: 409)

    /// 1016, 400: a query parameter out of range or malformed.
    package static func invalidParameter(_ message: String) -> ErrorEnvelope {
        ErrorEnvelope(code: 1016, message: message, status: 400)
    }

    /// 1017, 400: a where clause (or sort, property, group item) that does not parse or type-check.
    package static func invalidQuery(_ message: String) -> ErrorEnvelope {
        ErrorEnvelope(code: 1017, message: message, status: 400)
    }

    /// 504: a statement ran past the database's statement limit (the call's deadline had passed
    /// already; the statement was stopped rather than left running).
    package static let statementTimedOut = ErrorEnvelope(
        code: 504, message: "The request took longer than the database allows; try a narrower one", status: 504)

    /// 1018, 400: a clause over the size or nesting limits.
    package static func queryTooComplex(_ message: String) -> ErrorEnvelope {
        ErrorEnvelope(code: 1018, message: message, status: 400)
    }

    /// 1019, 400: valid syntax the platform does not execute yet (relation paths, distance).
    package static func notSupportedYet(_ feature: String) -> ErrorEnvelope {
        ErrorEnvelope(code: 1019, message: "\(feature) is not supported yet", status: 400)
    }

    /// 1020, 400: a table or column name that is not a valid identifier.
    package static func invalidName(_ name: String) -> ErrorEnvelope {
        ErrorEnvelope(
            code: 1020,
            message: "Invalid name '\(name)': use a letter followed by up to 62 letters, digits or underscores",
            status: 400)
    }

    /// 1021, 400: a bulk request with too many objects.
    package static func bulkLimit(_ limit: Int) -> ErrorEnvelope {
        ErrorEnvelope(code: 1021, message: "Maximum number of objects in a single request is \(limit)", status: 400)
    }

    /// 1021 in a unit of work: a CREATE_BULK or UPSERT_BULK of more than 100 objects (Backendless's words).
    package static let transactionBulkLimit = ErrorEnvelope(
        code: 1021, message: "Bulk create operation supports no more than 100 objects", status: 400)

    /// 1011 in a transaction (a unit of work, a deep save): a column that does not exist, which a
    /// transaction never creates (Backendless's words, grammar included).
    package static func transactionColumnMissing(_ column: String, table: String) -> ErrorEnvelope {
        ErrorEnvelope(
            code: 1011,
            message:
                "Column '\(column)' in table '\(table)' does not exists. All tables and columns must be present in "
                + "the database before a transaction is executed.",
            status: 400)
    }

    /// 1022, 400: the body is not the JSON the endpoint expects.
    package static func invalidBody(_ message: String) -> ErrorEnvelope {
        ErrorEnvelope(code: 1022, message: message, status: 400)
    }

    /// 1023, 403: the caller may not perform the operation.
    package static func permissionDenied(_ operation: String, table: String) -> ErrorEnvelope {
        PermissionError.denied(operation, table: table)
    }

    /// 1024, 400: a schema change that conflicts with the table (column exists, system column).
    package static func schemaConflict(_ message: String) -> ErrorEnvelope {
        ErrorEnvelope(code: 1024, message: message, status: 400)
    }

    /// 1025, 409: a create naming an objectId that already exists.
    package static let objectExists = ErrorEnvelope(
        code: 1025, message: "An object with this objectId already exists", status: 409)

    /// 1026, 409: a transaction lost a serialization conflict or deadlock to a concurrent one;
    /// retrying it is safe.
    package static let transactionConflict = ErrorEnvelope(
        code: 1026, message: "The transaction conflicted with a concurrent one and was rolled back; retry it",
        status: 409)

    /// 1029, 400: a data write (save, update, delete, schema change) aimed at the GeoPoint table,
    /// whose rows geo-service owns.
    package static let geoPointsReadOnly = ErrorEnvelope(
        code: 1029, message: "GeoPoint objects are saved, changed and deleted through /geo/points, not the data API",
        status: 400)

    /// 1030, 503: a relation to GeoPoint before geo-service has created its tables.
    package static let geoUnavailable = ErrorEnvelope(
        code: 1030, message: "Geo points are not available yet: the geo service has not created its tables", status: 503
    )

    /// 1031, 400: a write or schema change beyond ``ColumnLimits`` (or PostgreSQL's own limit).
    package static func columnLimit(_ message: String) -> ErrorEnvelope {
        ErrorEnvelope(code: 1031, message: message, status: 400)
    }

    /// 1027, 400: a relation argument that is not `column[:Table:1|n]`, or a column that is not a
    /// relation.
    package static func invalidRelation(_ message: String) -> ErrorEnvelope {
        ErrorEnvelope(code: 1027, message: message, status: 400)
    }

    /// 1027: the named column is a plain column.
    package static func notARelation(_ column: String, table: String) -> ErrorEnvelope {
        invalidRelation("Column '\(column)' of table '\(table)' is not a relation")
    }

    /// 1028, 400: a one-to-one relation would hold more than one object.
    package static func oneToOneHoldsOne(_ column: String, table: String, reason: String) -> ErrorEnvelope {
        ErrorEnvelope(
            code: 1028, message: "Relation '\(column)' of table '\(table)' is one-to-one: \(reason)", status: 400)
    }

    /// Runs a query-language parse, mapping its refusal to 1017 or 1018.
    package static func parsing<Value>(_ parse: () throws(QueryLanguageError) -> Value) throws(ErrorEnvelope) -> Value {
        do {
            return try parse()
        } catch {
            throw from(error)
        }
    }

    /// Maps a query-language refusal to 1017 or 1018.
    package static func from(_ error: QueryLanguageError) -> ErrorEnvelope {
        switch error.kind {
        case .syntax: invalidQuery(error.message)
        case .tooComplex: queryTooComplex(error.message)
        }
    }
}
