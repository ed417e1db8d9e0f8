// The route table, one group per endpoint file: each group becomes a Hummingbird
// RouteCollection, and each route carries its OpenAPI operation beside its handler. The router,
// the 405 check (`ProblemMiddleware.allowedMethods`) and /openapi.json (OpenAPI.swift) all read
// this one table, so a route cannot be served without being described, or described without
// being served.

import Hummingbird

struct Route: Sendable {
    typealias Handler = @Sendable (Endpoints, Request, APIContext) async throws -> Response

    let method: HTTPRequest.Method
    let path: String
    let handler: Handler
    /// The OpenAPI 3.0 operation object, as JSON text.
    let openAPI: String

    init(_ method: HTTPRequest.Method, _ path: String, _ handler: @escaping Handler, openAPI: String) {
        self.method = method
        self.path = path
        self.handler = handler
        self.openAPI = openAPI
    }
}

extension Endpoints {
    /// The groups, in the order /openapi.json lists their paths.
    static let routeGroups: [[Route]] = [
        queryRoutes, layerRoutes, searchRoutes, appRoutes, scheduleRoutes, locateRoutes, tileRoutes, writeRoutes, changeRoutes,
        liveRoutes, fenceRoutes, webhookRoutes, adminRoutes, ogcRoutes, ogcTileRoutes, edrRoutes, ogcWriteRoutes, osrmRoutes, isochroneRoutes, mapRoutes,
    ]

    static let routes: [Route] = routeGroups.flatMap { $0 }

    /// One group as a RouteCollection over these endpoints.
    func collection(_ routes: [Route]) -> RouteCollection<APIContext> {
        let collection = RouteCollection(context: APIContext.self)
        for route in routes {
            let handler = route.handler
            collection.on(RouterPath(route.path), method: route.method) { request, context in
                try await handler(self, request, context)
            }
        }
        return collection
    }
}
