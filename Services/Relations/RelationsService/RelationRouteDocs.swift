import DataEngine
import InternalProtocol

extension RouteDoc {
    /// `POST data/:table/:id/:relation`.
    static let setRelation = RouteDoc(
        "Sets a relation's children to the listed or matching objects; answers how many are linked.",
        query: relationChildrenQuery, body: relationChildrenBody, json: .integer)

    /// `PUT data/:table/:id/:relation`.
    static let addRelation = RouteDoc(
        "Adds the listed or matching objects to a relation; answers how many were added.",
        query: relationChildrenQuery, body: relationChildrenBody, json: .integer)

    /// `DELETE data/:table/:id/:relation`.
    static let deleteRelation = RouteDoc(
        "Removes the listed or matching objects from a relation; answers how many were removed.",
        query: relationChildrenQuery, body: relationChildrenBody, json: .integer)

    /// `GET data/:table/:id/:relation`.
    static let loadRelation = RouteDoc(
        "Lists a page of a parent's children in a relation.",
        query: [childCondition] + FindQueryDocs.find,
        json: .array(.ref("DataObject")))

    /// `POST data/:table/:id/:relation/load`.
    static let loadRelationByBody = RouteDoc(
        "Lists a page of a parent's children in a relation, the query in the body.",
        body: .json(
            FindQueryDocs.body([childCondition] + FindQueryDocs.find).described(
                "The data query: the GET route's parameters as members"),
            required: false),
        json: .array(.ref("DataObject")))

    /// `whereClause`: the JS SDK's name of `where`, read when `where` is absent.
    private static let childCondition = FindQueryDocs.clause(
        "whereClause", "A condition on the children, read when where is absent")

    /// `?whereClause=` or `?where=`: the children a change names when the body does not.
    private static let relationChildrenQuery: [QueryParameter] = [
        FindQueryDocs.clause(
            "whereClause", "A condition on the child table naming the children (only spaces: the body names them)"),
        FindQueryDocs.clause("where", "The same as whereClause, which it overrides"),
    ]

    /// The children's objectIds (non-empty strings, numbers or objects with `objectId`), at most
    /// ``RelationChildren/idLimit`` of them, unless the query names them (then the body is not read).
    private static let relationChildrenBody = Body.json(
        .array(
            .either(
                APISchema.string.length(1), APISchema.integer,
                APISchema.object(["objectId": APISchema.string.length(1)], required: ["objectId"]))
        ).described("At most \(RelationChildren.idLimit) ids"),
        required: false)
}
