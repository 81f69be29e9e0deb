import DataEngine
import InternalProtocol
import ServiceRuntime

/// The named schemas of the geo routes' descriptions, published as components.
enum GeoSchemas {
    /// `GeoPoint`: a point, or a cluster of points (`___class` GeoCluster, with `totalPoints`).
    static let point = APISchema.object(
        [
            "___class": .choice(["GeoPoint", "GeoCluster"]),
            "objectId": APISchema.string.described("A cluster's is cluster_{column}_{row}_{size}"),
            "latitude": .number,
            "longitude": .number,
            "categories": .array(.string),
            "metadata": APISchema.anyObject.described("Present when asked for"),
            "distance": APISchema.number.described("From the search's center, in its units"),
            "totalPoints": APISchema.integer.described("A cluster's number of points"),
        ], required: ["___class", "objectId", "latitude", "longitude", "categories"])

    /// `GeoRelativeMatch`: a point of a relative find, with the share of the metadata it matches.
    static let relativeMatch = APISchema.object(
        ["geoPoint": .ref("GeoPoint"), "matches": APISchema.number.described("Percent of the members matched")],
        required: ["geoPoint", "matches"])

    /// `GeoCategory`: a category with its number of points.
    static let category = APISchema.object(
        ["objectId": .string, "name": .string, "size": .integer], required: ["objectId", "name", "size"])

    /// `GeoFence`: a fence's definition as saved.
    static let fence = APISchema.object(
        [
            "objectId": .string,
            "geofenceName": .string,
            "type": .choice(["CIRCLE", "RECT", "SHAPE"]),
            "nodes": .array(
                .object(["latitude": .number, "longitude": .number], required: ["latitude", "longitude"])),
            "onStayDuration": APISchema.integer.described("Seconds"),
            "actions": APISchema.anyObject.described("onenter, onstay and onexit to their actions"),
        ], required: ["objectId", "geofenceName", "type", "nodes", "onStayDuration"])

    /// `GeoFenceEvent`: an event a fence action recorded.
    static let fenceEvent = APISchema.object(
        [
            "event": .string, "objectId": APISchema.string.orNull.described("The point's, if it has one"),
            "at": APISchema.integer.described("Milliseconds since 1970"),
        ], required: ["event", "objectId", "at"])

    /// A latitude in degrees.
    static let latitude = APISchema.number.within(-90, 90)
    /// A longitude in degrees.
    static let longitude = APISchema.number.within(-180, 180)
    /// `{latitude, longitude}` in a request.
    static let node = APISchema.object(
        ["latitude": latitude, "longitude": longitude], required: ["latitude", "longitude"])

    /// A number above 0 and at most `maximum`. JSON Schema's `minimum` is inclusive: the smallest
    /// normal double stands for "above 0" (and stays above 0 in any unit a radius is in).
    static func positive(atMost maximum: Double) -> APISchema {
        APISchema.number.within(Double.leastNormalMagnitude, maximum)
    }

    /// One category name as ``GeoCategoryName/normalized(_:)`` takes it: 1 to 100 characters, no
    /// comma and no control character (nor only spaces, which no pattern here says).
    static let categoryName = APISchema.string.matching("^" + categoryCharacter + "{1,100}$")

    /// A character a category name may hold.
    static let categoryCharacter = #"[^,\x00-\x1F\x7F-\x9F]"#

    /// A geofence's name as ``GeoFence`` takes it: 1 to 100 characters, no control character.
    static let fenceName = APISchema.string.matching(#"^[^\x00-\x1F\x7F-\x9F]{1,100}$"#)

    /// A search's fence: a fence's name, or empty for none.
    static let searchedFence = APISchema.string.matching(#"^[^\x00-\x1F\x7F-\x9F]{0,100}$"#)

    /// A point's metadata as ``GeoMetadata`` takes it: names of 1 to 255 characters; strings,
    /// numbers, booleans, nulls and data objects (with `___class`) as values.
    static let metadata = APISchema.map(
        .either(
            .string, .number, .boolean, APISchema(types: ["null"]),
            .object(["___class": .identifier], required: ["___class"]))
    ).members(0, named: APISchema.string.length(1, 255))

    /// A cluster's id, `cluster_{column}_{row}_{size}` (size in degrees, above 0 and at most 360).
    static let clusterID = APISchema.string.matching(
        #"^cluster_-?[0-9]{1,15}_-?[0-9]{1,15}_[0-9]{1,3}(\.[0-9]{1,15})?$"#
    )
    .examples("cluster_0_0_1.0")

    /// Every geo schema by name.
    static let all: [String: APISchema] = [
        "GeoPoint": point, "GeoRelativeMatch": relativeMatch, "GeoCategory": category, "GeoFence": fence,
        "GeoFenceEvent": fenceEvent,
    ]
}

/// `{"result": true}`, the answer to a deletion.
private let deleted = APISchema.object(["result": .boolean], required: ["result"])

/// `{"geopoint": …}`, the answer to a save.
private let savedPoint = APISchema.object(["geopoint": .ref("GeoPoint")], required: ["geopoint"])

/// A point's body: its position, categories (names or one name) and flat metadata; `required`
/// names the members that must be present.
private func pointBody(required: [String]) -> RouteDoc.Body {
    .json(
        .object(
            [
                "latitude": GeoSchemas.latitude,
                "longitude": GeoSchemas.longitude,
                "categories": APISchema.either(
                    .array(GeoSchemas.categoryName), GeoSchemas.categoryName, APISchema(types: ["null"])
                ).described("Up to 100 names, or one; Default when absent on a save"),
                "metadata": GeoSchemas.metadata.orNull.described(
                    "Up to \(GeoMetadata.maximumMembers) members of 1 to 255 characters: strings, numbers, booleans, nulls "
                        + "and data objects"),
                "objectId": APISchema.string.orNull.described("On save: a known point's id replaces that point"),
            ], required: required
        ).examples(
            .members([
                "latitude": .number(40.7128), "longitude": .number(-74.006),
                "categories": .list([.text(DocumentExamples.geoCategory), "Default"]),
                "metadata": .members(["name": "example"]),
            ])))
}

extension RouteDoc {
    // MARK: Points

    /// `POST geo/points`.
    static let savePoint = RouteDoc(
        "Saves a new point, or replaces the point the body's objectId names.",
        body: pointBody(required: ["latitude", "longitude"]), json: savedPoint
    ).linking(
        [("ReadPoint", "GET", "geo/points/:id"), ("DeletePoint", "DELETE", "geo/points/:id")],
        ["id": "$response.body#/objectId"])

    /// `PUT geo/points/:id`.
    static let replacePoint = RouteDoc(
        "Replaces a point's position, categories and metadata.",
        body: pointBody(required: ["latitude", "longitude"]), json: savedPoint)

    /// `PATCH geo/points/:id`.
    static let updatePoint = RouteDoc(
        "Changes the members of a point the body names.", body: pointBody(required: []), json: savedPoint)

    /// `DELETE geo/points/:id`.
    static let deletePoint = RouteDoc("Deletes a point.", json: deleted)

    /// `GET geo/points/:id`.
    static let point = RouteDoc("Reads a point with its metadata.", json: .ref("GeoPoint"))

    /// `GET geo/points/:id/metadata`.
    static let pointMetadata = RouteDoc(
        "Reads a point's metadata, or a cluster's merged metadata (searched again with the query).",
        query: geoCorners(required: false) + geoSearchQuery(radius: true), json: .anyObject)

    // MARK: Searches

    /// `GET geo/points`.
    static let findPoints = RouteDoc(
        "Finds a page of points (or clusters, or relative matches) by radius, category, metadata and condition.",
        query: geoSearchQuery(radius: true) + geoRelativeQuery(required: false), json: .array(geoFound))

    /// `GET geo/rect`.
    static let findInRectangle = RouteDoc(
        "Finds a page of points (or clusters, or relative matches) in a rectangle.",
        query: geoCorners(required: true) + geoSearchQuery(radius: false) + geoRelativeQuery(required: false),
        json: .array(geoFound))

    /// `GET geo/relative/points`.
    static let relativeFindPoints = RouteDoc(
        "Finds the points matching at least a share of the given metadata.",
        query: geoSearchQuery(radius: true) + geoRelativeQuery(required: true), json: .array(.ref("GeoRelativeMatch")))

    /// `GET geo/relative/rect`.
    static let relativeFindInRectangle = RouteDoc(
        "Finds the points in a rectangle matching at least a share of the given metadata.",
        query: geoCorners(required: true) + geoSearchQuery(radius: false) + geoRelativeQuery(required: true),
        json: .array(.ref("GeoRelativeMatch")))

    /// `GET geo/count`.
    static let countPoints = RouteDoc(
        "Counts the points a search finds.", query: geoCorners(required: false) + geoSearchQuery(radius: true),
        json: .integer)

    /// `GET geo/clusters/:id/points`.
    static let clusterPoints = RouteDoc(
        "Lists a page of a cluster's points (searched again with the query).",
        query: geoCorners(required: false) + geoSearchQuery(radius: true), json: .array(.ref("GeoPoint"))
    ).path("id", GeoSchemas.clusterID)

    /// A search's item: a point or cluster, or a relative match when the query asks for one.
    private static let geoFound = APISchema.either(.ref("GeoPoint"), .ref("GeoRelativeMatch"))

    /// The search parameters every geo search reads (their names match in any case); `radius`
    /// says whether the route takes `r` (a rectangle search refuses one).
    private static func geoSearchQuery(radius: Bool) -> [QueryParameter] {
        var parameters: [QueryParameter] = [
            QueryParameter("lat", GeoSchemas.latitude.examples(.number(40.7128)), "The center's latitude, with lon"),
            QueryParameter("lon", GeoSchemas.longitude.examples(.number(-74.006)), "The center's longitude, with lat"),
        ]
        if radius {
            parameters.append(
                QueryParameter(
                    "r", GeoSchemas.positive(atMost: Sphere.farthest).examples(.integer(1000)),
                    "A radius around lat and lon, above 0 and at most half the Earth's circumference ("
                        + "\(Int(Sphere.farthest)) m) in units; not with a rectangle"))
        }
        let category = GeoSchemas.categoryCharacter
        return parameters + [
            QueryParameter(
                "units", .choice(DistanceUnit.allCases.map(\.rawValue)),
                "The radius's and distances' unit, in any case (default METERS)"),
            QueryParameter(
                "categories",
                APISchema.string.matching("^" + category + "{0,100}(?:," + category + "{0,100})*$"),
                "Comma-separated categories of 1 to 100 characters (default Default)"),
            QueryParameter(
                "metadata", .string,
                "A JSON object (up to \(GeoMetadata.maximumMembers) members) every member of which a point's metadata must equal"
            ),
            FindQueryDocs.clause("where", "A condition on the metadata"),
            FindQueryDocs.clause("whereClause", "The same as where, read when where is absent"),
            QueryParameter("includemetadata", .boolean, "Answer each point's metadata (true or false in any case)"),
            QueryParameter(
                "pagesize", APISchema.integer.within(1...GeoSearch.maximumPageSize), "Items per page (default 100)"),
            QueryParameter("offset", APISchema.integer.within(0...Int(Int32.max)), "Items to skip"),
            QueryParameter(
                "dpp", APISchema.number.within(GeoSearch.smallestCell, 360),
                "Degrees per pixel (at least \(GeoSearch.smallestCell)): answers clusters; dpp × clusterGridSize must be at most 360"
            ),
            QueryParameter(
                "clusterGridSize", APISchema.integer.within(1...100_000),
                "A cluster cell's side in pixels (default 100), read with dpp"),
            QueryParameter("geoFence", GeoSchemas.searchedFence, "Only the points inside this fence"),
        ]
    }

    /// A rectangle's corners (`required` on the rectangle routes; elsewhere `nwlat` makes one,
    /// which then needs the other three and no `r`).
    private static func geoCorners(required: Bool) -> [QueryParameter] {
        // Where a rectangle is the search, the examples frame the seeded point (``DocumentExampleSeed``);
        // elsewhere they would clash with the radius's.
        func corner(_ name: String, _ schema: APISchema, _ example: Int, _ text: String) -> QueryParameter {
            QueryParameter(name, required ? schema.examples(.integer(example)) : schema, text, required: required)
        }
        return [
            corner("nwlat", GeoSchemas.latitude, 41, "The north-west corner's latitude, not south of selat"),
            corner("nwlon", GeoSchemas.longitude, -75, "The north-west corner's longitude"),
            corner("selat", GeoSchemas.latitude, 40, "The south-east corner's latitude"),
            corner("selon", GeoSchemas.longitude, -74, "The south-east corner's longitude"),
        ]
    }

    /// A relative find's metadata and threshold.
    private static func geoRelativeQuery(required: Bool) -> [QueryParameter] {
        [
            QueryParameter(
                "relativeFindMetadata", APISchema.string.length(1).examples(#"{"name": "example"}"#),
                "A JSON object of 1 to 64 members to match, with relativeFindPercentThreshold", required: required),
            QueryParameter(
                "relativeFindPercentThreshold", GeoSchemas.positive(atMost: 100).examples(.integer(50)),
                "The share of members a point must match, above 0 and at most 100 percent",
                required: required),
        ]
    }

    // MARK: Categories

    /// `GET geo/categories`.
    static let geoCategories = RouteDoc(
        "Lists the app's categories with their numbers of points.", json: .array(.ref("GeoCategory")))

    /// `PUT geo/categories/:name`.
    static let createGeoCategory = RouteDoc(
        "Creates a category (or reads it if it exists).", json: .ref("GeoCategory"))

    /// `DELETE geo/categories/:name`.
    static let deleteGeoCategory = RouteDoc(
        "Deletes a category, removing it from its points and the points only in it.", json: deleted)

    // MARK: Fences

    /// `GET geo/fences`.
    static let geoFences = RouteDoc(
        "Lists the app's geofences, or the one named.",
        query: [QueryParameter("geoFence", .string, "Only the fence of this name (empty: every fence)")],
        json: .array(.ref("GeoFence")))

    /// `POST geo/fences`.
    static let saveGeoFence = RouteDoc(
        "Saves a geofence, replacing one of the same name (server-code key).",
        body: .json(
            .either(
                fence(["CIRCLE"], nodes: 2...2, "The center and a point on the edge"),
                fence(["RECT"], nodes: 2...2, "The north-west and south-east corners"),
                fence(["SHAPE"], nodes: 3...1000, "3 to 1000 corners")
            ).examples(
                .members([
                    "geofenceName": .text(DocumentExamples.geofence), "type": "RECT",
                    "nodes": .list([
                        .members(["latitude": .integer(41), "longitude": .integer(-109)]),
                        .members(["latitude": .integer(37), "longitude": .integer(-102)]),
                    ]),
                    "actions": .members([
                        "onenter": .members(["type": "EVENT", "eventname": "entered"]),
                        "onstay": .members(["type": "EVENT", "eventname": "stayed"]),
                        "onexit": .members(["type": "EVENT", "eventname": "left"]),
                    ]),
                ]))),
        json: .ref("GeoFence"))

    /// A fence of one of `types` in a save, with `nodes` nodes.
    private static func fence(_ types: [String], nodes: ClosedRange<Int>, _ described: String) -> APISchema {
        .object(
            [
                "geofenceName": GeoSchemas.fenceName.examples(.text(DocumentExamples.geofence)).described(
                    "1 to 100 characters (`name` is read too)"),
                "type": .choice(types),
                "nodes": APISchema.array(GeoSchemas.node).elements(nodes.lowerBound, nodes.upperBound).described(
                    described),
                "onStayDuration": APISchema.integer.within(0, 86_400 * 365),
                "actions": APISchema.object(
                    ["onenter": .anyObject, "onstay": .anyObject, "onexit": .anyObject], closed: true
                ).described("The events' actions"),
            ], required: ["geofenceName", "type", "nodes"])
    }

    /// `DELETE geo/fences/:name`.
    static let deleteGeoFence = RouteDoc(
        "Deletes a geofence with its presence and events (server-code key).", json: deleted)

    /// A geofence's name in a path.
    private static let fenceName = APISchema.string.length(1).examples(.text(DocumentExamples.geofence))

    /// `GET geo/fences/:name/events`.
    static let geoFenceEvents = RouteDoc(
        "Lists a page of the events a geofence's actions recorded (server-code key).",
        query: [
            QueryParameter("pagesize", APISchema.integer.within(1, 1000), "Events per page (default 100)"),
            QueryParameter("offset", APISchema.integer.within(0, Double(Int32.max)), "Events to skip"),
        ], json: .array(.ref("GeoFenceEvent"))
    ).path("name", fenceName)

    /// `POST geo/fence/:event`.
    static let runGeoFenceAction = RouteDoc(
        "Runs a geofence's onenter, onstay or onexit action for a point, or every saved point without a body.",
        query: [
            QueryParameter(
                "geoFence", GeoSchemas.fenceName.examples(.text(DocumentExamples.geofence)), "The fence", required: true
            )
        ],
        body: .json(
            .either(
                .object(["objectId": APISchema.string.length(1)], required: ["objectId"]),
                .object(
                    ["latitude": GeoSchemas.latitude, "longitude": GeoSchemas.longitude],
                    required: ["latitude", "longitude"])
            ).examples(.members(["latitude": .integer(39), "longitude": .integer(-105)])),
            required: false),
        json: APISchema.integer.described("How many points the action ran for"))
}
