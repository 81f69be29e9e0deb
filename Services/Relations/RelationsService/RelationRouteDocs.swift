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
        query: [QueryParameter("whereClause", .string, "A condition on the children (as `where`)")]
            + FindQueryDocs.find,
        json: .array(.ref("DataObject")))

    /// `POST data/:table/:id/:relation/load`.
    static let loadRelationByBody = RouteDoc(
        "Lists a page of a parent's children in a relation, the query in the body.",
        body: .json(
            APISchema.object(relationFindBody).described("The data query: the GET route's parameters as members"),
            required: false),
        json: .array(.ref("DataObject")))

    /// `?whereClause=` or `?where=`: the children a change names when the body does not.
    private static let relationChildrenQuery: [QueryParameter] = [
        QueryParameter("whereClause", .string, "A condition on the child table naming the children"),
        QueryParameter("where", .string, "The same as whereClause"),
    ]

    /// The children's objectIds (strings, numbers or objects with `objectId`), unless the query names them.
    private static let relationChildrenBody = Body.json(
        .array(
            .either(
                APISchema.string, APISchema.integer, APISchema.object(["objectId": .string], required: ["objectId"]))),
        required: false)

    /// The same query as body members (lists may also be arrays).
    private static let relationFindBody: [String: APISchema] = [
        "where": .string, "whereClause": .string, "having": .string,
        "props": stringList, "property": stringList, "excludeProps": stringList, "sortBy": stringList,
        "groupBy": stringList, "loadRelations": stringList, "distinct": .boolean,
        "pageSize": APISchema.integer.within(1, 100), "offset": APISchema.integer.within(0, Double(Int32.max)),
        "relationsDepth": APISchema.integer.within(0, 10), "relationsPageSize": APISchema.integer.within(1, 100),
    ]

    /// A comma-separated list, or an array of items.
    private static let stringList = APISchema.either(.string, .array(.string))
}
