import DataAPI
import DataEngine
import InternalProtocol
import ServiceRuntime

/// The named schemas the data routes' descriptions refer to, published as components.
enum DataSchemas {
    /// `ColumnDescription`: one column as `properties` and the schema routes answer it.
    static let columnDescription = APISchema.object(
        [
            "name": .string,
            "type": .choice(ColumnType.allCases.map(\.rawValue)),
            "required": .boolean,
            "defaultValue": APISchema.any.described("The column's default, or null"),
            "relatedTable": APISchema.string.orNull.described("A relation column's child table"),
            "customRegex": APISchema.string.orNull,
            "autoLoad": APISchema.boolean.orNull.described("Whether a relation column loads with its objects"),
            "isPrimaryKey": .boolean,
            "expression": APISchema.string.orNull,
        ], required: ["name", "type", "required", "isPrimaryKey"])

    /// `ColumnDefinition`: a column to add, or a relation column (type `DATA_REF`).
    static let columnDefinition = APISchema.object(columnMembers, required: ["name", "type"])

    /// The members a column definition or a column change may carry.
    static let columnMembers: [String: APISchema] = [
        "name": FindQueryDocs.name,
        "type": APISchema.choice(
            ColumnType.allCases.map(\.rawValue) + ["DATE", "INTEGER", "BOOL", "FLOAT", "NUMBER", "RELATION"]
        )
        .described("The column's type, in any case; DATA_REF (or RELATION) makes a relation column"),
        "required": flag,
        "unique": flag,
        "indexed": flag,
        "defaultValue": .any,
        "relatedTable": FindQueryDocs.name.described("A relation column's child table"),
        "cardinality": APISchema.choice(["1", "n", "1:1", "1:n", "ONE_TO_ONE", "ONE_TO_MANY", "ONE", "MANY"])
            .described("A relation column's cardinality, in any case: 1 (the default) or n"),
        "autoLoad": flag.described("Whether a relation column loads with its objects"),
    ]

    /// A boolean as schema bodies take it: JSON's, or the text true or false.
    private static let flag = APISchema.either(.boolean, .choice(["true", "false"]))

    /// `UnitOfWork`: operations run in order in one transaction.
    static let unitOfWork = APISchema.object(
        [
            "operations": APISchema.array(
                .either(
                    operation([.create, .upsert], payload: .ref("SavedObject")),
                    operation([.update], payload: objectWithID),
                    operation(
                        [.createBulk, .upsertBulk], payload: APISchema.array(.ref("SavedObject")).elements(0, 100)),
                    operation([.delete], payload: .either(APISchema.string.length(1), objectWithID)),
                    operation([.updateBulk, .deleteBulk], payload: bulkSelection),
                    operation(
                        [.find],
                        payload: APISchema.anyObject.described(
                            "A query: whereClause, properties, sortBy, pageSize, offset, related…")),
                    operation([.addRelation, .setRelation, .deleteRelation], payload: relationChange))
            ).elements(1, UnitOfWork.operationLimit),
            "isolationLevelEnum": APISchema.choice(
                ["READ_UNCOMMITTED", "READ_COMMITTED", "REPEATABLE_READ", "SERIALIZABLE", "SERIALZABLE"]
            ).orNull,
        ], required: ["operations"]
    ).examples(
        .members([
            "operations": .list([
                .members([
                    "operationType": "CREATE", "table": .text(DocumentExamples.table), "opResultId": "created",
                    "payload": .members(["name": "made in a unit of work"]),
                ]),
                .members([
                    "operationType": "FIND", "table": .text(DocumentExamples.table), "opResultId": "found",
                    "payload": .members(["whereClause": "name = 'example'"]),
                ]),
            ])
        ]))

    /// One operation of a unit of work of one of `types`, with its payload.
    private static func operation(_ types: [UnitOfWork.OperationType], payload: APISchema) -> APISchema {
        .object(
            [
                "operationType": .choice(types.map(\.rawValue)), "table": .identifier,
                "opResultId": APISchema.string.length(1, UnitOfWork.maximumResultIdLength / 4).described(
                    "The name later operations refer to its result by (at most 256 bytes)"),
                "payload": payload,
            ], required: ["operationType", "table", "payload"])
    }

    /// An object naming an existing object by `objectId` (its other members are changes).
    private static let objectWithID: APISchema = {
        var schema = CommonSchemas.savedObject
        schema.required = ["objectId"]
        return schema
    }()

    /// A bulk operation's objects: a where clause, or their ids; UPDATE_BULK's `changes` too.
    private static let bulkSelection = APISchema.object([
        "conditional": APISchema.string.described("A where clause; blank for every object"),
        "unconditional": APISchema.array(.either(APISchema.string.length(1), objectWithID)),
        "changes": .ref("SavedObject"),
    ])

    /// A relation operation's parent, relation column and children (ids or objects, or a where clause).
    private static let relationChange = APISchema.object(
        [
            "parentObject": .either(APISchema.string.length(1), objectWithID),
            "relationColumn": .identifier,
            "unconditional": .either(
                APISchema.string.length(1), objectWithID, .array(.either(APISchema.string.length(1), objectWithID))),
            "conditional": APISchema.string.described("A where clause choosing the children"),
        ], required: ["parentObject", "relationColumn"])

    /// `UnitOfWorkResult`: every operation's result, or the error that rolled the unit back.
    static let unitOfWorkResult = APISchema.object(
        [
            "success": .boolean,
            "error": APISchema.object(
                ["message": .string, "code": .integer, "operation": APISchema.any.described("The failed operation")],
                required: ["message", "code"]
            ).orNull,
            "results": APISchema.map(
                .object(["operationType": .string, "result": .any], required: ["operationType", "result"])
            ).orNull.described("Each operation's result by its opResultId"),
        ], required: ["success", "error", "results"])

    /// Every data schema by name.
    static let all: [String: APISchema] = [
        "ColumnDescription": columnDescription, "ColumnDefinition": columnDefinition, "UnitOfWork": unitOfWork,
        "UnitOfWorkResult": unitOfWorkResult,
    ]

}

extension RouteDoc {
    // MARK: Query parameters

    // MARK: Queries

    /// `GET data/{table}`.
    static let findQuery = RouteDoc(
        "Finds the objects of a table matching a query, one page at a time", query: FindQueryDocs.find,
        json: .array(.ref("DataObject")))

    /// `POST data/{table}/find`.
    static let findByBody = RouteDoc(
        "Finds the objects of a table matching a query sent as a JSON body",
        body: .json(FindQueryDocs.body(FindQueryDocs.find), required: false), json: .array(.ref("DataObject")))

    /// `GET data/{table}/count`.
    static let countQuery = RouteDoc(
        "Counts the objects (or groups) of a table matching a query", query: FindQueryDocs.count, json: .integer)

    /// `POST data/{table}/count`.
    static let countByBody = RouteDoc(
        "Counts the objects (or groups) of a table matching a query sent as a JSON body",
        body: .json(FindQueryDocs.body(FindQueryDocs.count), required: false), json: .integer)

    /// `GET data/{table}/first`.
    static let firstObject = RouteDoc(
        "Reads the earliest created object matching a query, or null", query: FindQueryDocs.edge,
        json: APISchema.ref("DataObject").orNull)

    /// `GET data/{table}/last`.
    static let lastObject = RouteDoc(
        "Reads the latest created object matching a query, or null", query: FindQueryDocs.edge,
        json: APISchema.ref("DataObject").orNull)

    /// `GET data/{table}/filter`: QuickBlox's custom-object filters.
    static let quickBloxFilter = RouteDoc(
        "Finds or counts objects with QuickBlox filters (field, field[gt], field[in]…) on the query string",
        query: quickBloxFilterQuery(noun: "Objects"),
        json: .either(
            .object(["count": .integer], required: ["count"]),
            .object(
                ["skip": .integer, "limit": .integer, "items": .array(.ref("DataObject"))],
                required: ["skip", "limit", "items"])))

    /// `POST data/{table}/bql`: Backbeam's query language.
    static let bqlQuery = RouteDoc(
        "Finds objects with a BQL query and counts every match",
        body: .json(
            .object([
                "query": bqlText.orNull.described("[join r [having …]] where x > ?; without one every object matches"),
                "params": APISchema.array(.any).orNull.described("The values of the query's ? placeholders"),
                "limit": APISchema.integer.within(1...FindQuery.maximumPageSize).orNull.described(
                    "Objects per page (default 10)"),
                "offset": APISchema.integer.within(0, CommonSchemas.largestInteger).orNull.described(
                    "Objects to skip (default 0)"),
            ])),
        json: .object(
            ["objects": .array(.ref("DataObject")), "totalCount": .integer], required: ["objects", "totalCount"]))

    /// `POST data/{table}/bql/remove`: Backbeam's `removeObjects:offset:` and `removeAllObjects`.
    static let bqlRemove = RouteDoc(
        "Removes the objects a BQL query matches (the first limit after offset, in creation order, when limited) "
            + "that the caller may remove, in one statement, and answers how many",
        body: .json(
            .object([
                "query": bqlText.orNull.described("where x > ? (no join); without one every object matches"),
                "params": APISchema.array(.any).orNull.described("The values of the query's ? placeholders"),
                "limit": APISchema.integer.within(1...DeletionWindow.maximumLimit).orNull.described(
                    "The most objects to remove (default: every match)"),
                "offset": APISchema.integer.within(0...Int(Int32.max)).orNull.described(
                    "Matching objects to leave first (default 0)"),
            ])),
        json: .object(["removed": .integer], required: ["removed"]))

    /// `POST data/{table}/bql/refresh`: Backbeam's `refresh:params:` of one object.
    static let bqlRefresh = RouteDoc(
        "Reads one object by its id with the relationships a BQL query joins",
        body: .json(
            .object(
                [
                    "objectId": APISchema.string.length(1),
                    "query": bqlText.orNull.described("join r [having x > ?]… (no where)"),
                    "params": APISchema.array(.any).orNull.described("The values of the query's ? placeholders"),
                ], required: ["objectId"])),
        json: .ref("DataObject"))

    // MARK: Single objects

    /// `GET data/{table}/pk`.
    static let findByKey = RouteDoc(
        "Reads the object whose columns equal the query's column=value pairs",
        query: [
            QueryParameter(
                "objectId", .string, "The object's id; any other column may be named so too, and one pair is needed",
                required: true)
        ],
        json: .ref("DataObject"))

    /// `GET data/{table}/{id}`.
    static let getObject = RouteDoc("Reads one object by its id", query: FindQueryDocs.object, json: .ref("DataObject"))

    /// `POST data/{table}`.
    static let createObject = RouteDoc(
        "Creates an object and answers it as stored", body: .json(.ref("SavedObject")), json: .ref("DataObject")
    ).linking(
        [
            ("ReadObject", "GET", "data/:table/:id"), ("UpdateObject", "PUT", "data/:table/:id"),
            ("DeleteObject", "DELETE", "data/:table/:id"),
        ],
        ["table": "$request.path.table", "id": "$response.body#/objectId"])

    /// `PUT data/{table}`.
    static let saveObject = RouteDoc(
        "Updates the object when it carries an objectId, else creates it", body: .json(.ref("SavedObject")),
        json: .ref("DataObject")
    ).linking(
        [
            ("ReadObject", "GET", "data/:table/:id"), ("UpdateObject", "PUT", "data/:table/:id"),
            ("DeleteObject", "DELETE", "data/:table/:id"),
        ],
        ["table": "$request.path.table", "id": "$response.body#/objectId"])

    /// `PUT data/{table}/upsert`.
    static let upsertObject = RouteDoc(
        "Creates an object or replaces the one with its objectId", body: .json(.ref("SavedObject")),
        json: .ref("DataObject"))

    /// `PUT data/{table}/deep-save`.
    static let deepSave = RouteDoc(
        "Saves an object with the related objects it nests in one transaction",
        body: .json(.ref("SavedObject")), json: .ref("DataObject"))

    /// `PUT data/{table}/{id}`.
    static let updateObject = RouteDoc(
        "Updates the properties the body names on one object and answers it",
        body: .json(.ref("SavedObject")), json: .ref("DataObject"))

    /// `DELETE data/{table}/{id}`.
    static let deleteObject = RouteDoc("Deletes one object by its id", json: deletion)

    /// `DELETE data/{table}` with the id in the body.
    static let deleteObjectByBody = RouteDoc(
        "Deletes the object whose objectId the body names",
        body: .json(
            .object(
                ["objectId": APISchema.string.examples(.text(DocumentExamples.bodyRemovedObjectID))],
                required: ["objectId"])),
        json: deletion)

    // MARK: Bulk operations

    /// `POST data/bulk/{table}`.
    static let createBulk = RouteDoc(
        "Creates up to 100 objects and answers their ids in order", body: .json(.array(.ref("SavedObject"))),
        json: .array(.string))

    /// `PUT data/bulkupsert/{table}`.
    static let upsertBulk = RouteDoc(
        "Creates or replaces by id up to 100 objects and answers their ids in order",
        body: .json(.array(.ref("SavedObject"))), json: .array(.string))

    /// `PUT data/bulk/{table}`.
    static let updateBulk = RouteDoc(
        "Changes every object matching a condition and answers how many changed",
        query: [FindQueryDocs.clause("where", "A condition; without one (or with only spaces) every object changes")],
        body: .json(.ref("SavedObject")), json: .integer)

    /// `DELETE data/bulk/{table}`.
    static let deleteBulk = RouteDoc(
        "Deletes every object matching a condition (or the ids the body lists) and answers how many",
        query: [
            FindQueryDocs.clause(
                "where", "A condition (else the body's); without one (nor ids in the body) every object goes")
        ],
        body: .json(bulkDeletion, required: false), json: .integer)

    /// `POST data/bulk/{table}/delete`.
    static let deleteBulkByBody = RouteDoc(
        "Deletes every object matching the body's condition (or ids) and answers how many",
        body: .json(bulkDeletion, required: false), json: .integer)

    /// A bulk deletion's body: `{"where": …}` or the ids (or objects) to delete.
    private static let bulkDeletion = APISchema.either(.object(["where": FindQueryDocs.text.orNull]), idList)

    // MARK: Units of work

    /// `POST transaction/unit-of-work`.
    static let unitOfWork = RouteDoc(
        "Runs a unit of work's operations in one transaction", body: .json(.ref("UnitOfWork")),
        json: .ref("UnitOfWorkResult"))

    // MARK: Settings and schema

    /// `GET data/_settings`.
    static let dataSettings = RouteDoc("Reads the app's data settings", json: settings)

    /// `PUT data/_settings`.
    static let setDataSettings = RouteDoc(
        "Turns dynamic schema on or off",
        body: .json(
            .object(["dynamicSchema": .either(.boolean, .choice(["true", "false"]))], required: ["dynamicSchema"])),
        json: settings)

    /// `GET data/{table}/properties`.
    static let describeTable = RouteDoc(
        "Describes a table's columns, relation columns last", json: .array(.ref("ColumnDescription")))

    /// `POST data/{table}/properties` and `POST data/{table}/schema`.
    static let addColumns = RouteDoc(
        "Creates the table if needed, adds the columns and describes the table's columns",
        body: .json(.either(.ref("ColumnDefinition"), .array(.ref("ColumnDefinition"))), required: false),
        json: .array(.ref("ColumnDescription")))

    /// `PUT data/{table}/properties/{column}`.
    static let alterColumn = RouteDoc(
        "Renames or changes one column and describes it", body: .json(.object(DataSchemas.columnMembers)),
        json: .ref("ColumnDescription"))

    /// `DELETE data/{table}/properties/{column}`.
    static let dropColumn = RouteDoc("Drops one column", json: .anyObject)

    /// `DELETE data/{table}/schema`.
    static let dropTable = RouteDoc("Drops a table and its objects", json: .anyObject).path(
        "table", DocumentExamples.named(DocumentExamples.droppedTable))

    // MARK: Permissions

    /// `GET data/{table}/permissions`.
    static let tablePermissions = RouteDoc(
        "Lists a table's permission cells and owner policy; * names the global matrix", json: .ref("PermissionRules"))

    /// `GET data/{table}/permissions/{objectId}`.
    static let objectPermissions = RouteDoc(
        "Lists the permission cells of one object", json: .array(.ref("PermissionCell"))
    ).path("target", DocumentExamples.objectIDParameter)

    /// `PUT data/{table}/permissions/owner/{action}`.
    static let setOwnerPolicy = RouteDoc(
        "Grants, denies or clears (INHERIT) one operation for the owners of a table's objects",
        body: .json(.object(["permission": permissionName], required: ["permission"])), answer: emptyAnswer)

    /// `PUT data/{table}/permissions/{action}/{objectId}`.
    static let setObjectPermission = RouteDoc(
        "Grants, denies or clears (INHERIT) one operation on one object for a user or a role",
        body: .json(permissionChange), answer: emptyAnswer)

    /// `PUT data/{table}/permissions/{action}`.
    static let setTablePermission = RouteDoc(
        "Grants, denies or clears (INHERIT) one operation on a table (* for all) for a user or a role",
        body: .json(permissionChange), answer: emptyAnswer)

    // MARK: Shared pieces

    /// A delete's answer.
    private static let deletion = APISchema.object(
        ["deletionTime": APISchema.integer.described("Milliseconds since 1970")], required: ["deletionTime"])

    /// Object ids, or objects carrying them.
    private static let idList = APISchema.array(
        .either(.string, .object(["objectId": .string], required: ["objectId"])))

    /// The data settings.
    private static let settings = APISchema.object(["dynamicSchema": .boolean], required: ["dynamicSchema"])

    /// The operation a permission change names (``DataOperation/init(permissionName:)``).
    private static let permissionName = APISchema.choice([
        "FIND", "UPDATE", "REMOVE", "DELETE", "ADD", "CREATE", "DESCRIBE", "PERMISSION", "LOAD_RELATIONS",
        "LOADRELATIONS", "ADD_RELATION", "ADDRELATION", "DELETE_RELATION", "DELETERELATION",
    ]).described("The operation, in any case")

    /// A BQL query's text.
    private static let bqlText = APISchema.string.length(0, FindQueryDocs.textLength)

    /// A table or object permission change.
    private static let permissionChange = APISchema.object(
        [
            "permission": permissionName,
            "user": APISchema.string.described("A user's id, or * for every user"),
            "role": APISchema.string.described("A role's name, or * for every role; neither means every role"),
        ], required: ["permission"])

    /// An answer without a body.
    private static let emptyAnswer = Body(mediaType: "", schema: .any)
}
