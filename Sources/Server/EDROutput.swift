// OGC API – EDR's documents (EDREndpoints.swift): a station layer's observations as CoverageJSON
// (each station a PointSeries coverage) or as EDR GeoJSON (a feature per station and hour), its
// stations as EDR GeoJSON locations, and the EDR members of its collection. Written on the same
// output path as every other answer.
//
// CoverageJSON: the t axis holds each observation's end (the hour an hourly mean is reported
// at), with the interval as its bounds; a missing value (TimeSeries.swift's rule) is null.

import Engine
import Geometry
import Support

extension Output {
    static let coverageJSONType = "application/prs.coverage+json"
    static let gregorian = "http://www.opengis.net/def/uom/ISO-8601/0/Gregorian"

    /// The observations as CoverageJSON: one station as a Coverage (`single`), else a
    /// CoverageCollection, the parameters and reference systems given once. Stations without an
    /// observation in the answer are left out (a CoverageJSON axis has at least one value).
    static func coverageJSON(_ w: inout JSONWriter, _ data: EnvironmentalData, single: Bool) {
        let places = data.places.filter { !$0.observations.isEmpty }
        w.beginObject()
        if single, let place = places.first {
            w.key("type"); w.string("Coverage")
            coverageParts(&w, place, data, withReferencing: true)
            edrParameters(&w, data)
            w.endObject()
            return
        }
        w.key("type"); w.string("CoverageCollection")
        w.key("domainType"); w.string("PointSeries")
        edrParameters(&w, data)
        referencing(&w)
        w.key("coverages")
        w.beginArray()
        for place in places {
            w.beginObject()
            w.key("type"); w.string("Coverage")
            coverageParts(&w, place, data, withReferencing: false)
            w.endObject()
        }
        w.endArray()
        w.endObject()
    }

    private static func coverageParts(_ w: inout JSONWriter, _ place: EnvironmentalData.Station, _ data: EnvironmentalData, withReferencing: Bool) {
        w.key("domain")
        w.beginObject()
        w.key("type"); w.string("Domain")
        w.key("domainType"); w.string("PointSeries")
        w.key("axes")
        w.beginObject()
        w.key("x"); w.beginObject(); w.key("values"); w.beginArray(); w.number(place.position.lon); w.endArray(); w.endObject()
        w.key("y"); w.beginObject(); w.key("values"); w.beginArray(); w.number(place.position.lat); w.endArray(); w.endObject()
        w.key("t")
        w.beginObject()
        w.key("values"); w.beginArray(); for o in place.observations { w.string(o.end.iso) }; w.endArray()
        w.key("bounds"); w.beginArray(); for o in place.observations { w.string(o.start.iso); w.string(o.end.iso) }; w.endArray()
        w.endObject()
        w.endObject()
        if withReferencing { referencing(&w) }
        w.endObject()
        w.key("ranges")
        w.beginObject()
        for (column, parameter) in data.parameters.enumerated() {
            w.key(parameter)
            w.beginObject()
            w.key("type"); w.string("NdArray")
            w.key("dataType"); w.string("float")
            w.key("axisNames"); w.beginArray(); w.string("t"); w.endArray()
            w.key("shape"); w.beginArray(); w.integer(Int64(place.observations.count)); w.endArray()
            w.key("values")
            w.beginArray()
            for o in place.observations { if let value = o.values[column] { w.number(value) } else { w.null() } }
            w.endArray()
            w.endObject()
        }
        w.endObject()
        w.key("vltava:location"); w.string(place.key)
    }

    private static func referencing(_ w: inout JSONWriter) {
        w.key("referencing")
        w.beginArray()
        w.beginObject()
        w.key("coordinates"); w.beginArray(); w.string("x"); w.string("y"); w.endArray()
        w.key("system"); w.beginObject(); w.key("type"); w.string("GeographicCRS"); w.key("id"); w.string(crs84); w.endObject()
        w.endObject()
        w.beginObject()
        w.key("coordinates"); w.beginArray(); w.string("t"); w.endArray()
        w.key("system"); w.beginObject(); w.key("type"); w.string("TemporalRS"); w.key("calendar"); w.string("Gregorian"); w.endObject()
        w.endObject()
        w.endArray()
    }

    /// CoverageJSON's parameters: each value column with its unit when the series declares one.
    private static func edrParameters(_ w: inout JSONWriter, _ data: EnvironmentalData) {
        w.key("parameters")
        w.beginObject()
        for parameter in data.parameters {
            w.key(parameter)
            w.beginObject()
            w.key("type"); w.string("Parameter")
            w.key("observedProperty"); w.beginObject(); w.key("label"); w.beginObject(); w.key("en"); w.string(parameter); w.endObject(); w.endObject()
            if let unit = data.stations.series.link.units[parameter] {
                w.key("unit"); w.beginObject(); w.key("symbol"); w.string(unit); w.endObject()
            }
            w.endObject()
        }
        w.endObject()
    }

    /// The observations as EDR GeoJSON: a feature per station and observation, its values as
    /// properties beside EDR's own (`datetime` the interval, `label`, `parameter-name`, and
    /// `edrqueryendpoint`, the station's location query).
    static func edrObservations(_ w: inout JSONWriter, _ data: EnvironmentalData, locationURL: (String) -> String) {
        w.beginObject()
        w.key("type"); w.string("FeatureCollection")
        w.key("features")
        w.beginArray()
        var count: Int64 = 0
        for place in data.places {
            for o in place.observations {
                count += 1
                w.beginObject()
                w.key("type"); w.string("Feature")
                w.key("id"); w.string(place.key + "/" + o.end.iso)
                w.key("geometry"); pointGeometry(&w, place.position)
                w.key("properties")
                w.beginObject()
                edrMembers(&w, data, place, datetime: o.start.iso + "/" + o.end.iso, locationURL: locationURL)
                for (column, parameter) in data.parameters.enumerated() {
                    w.key(parameter)
                    if let value = o.values[column] { w.number(value) } else { w.null() }
                }
                w.endObject()
                w.endObject()
            }
        }
        w.endArray()
        w.key("numberMatched"); w.integer(count)
        w.key("numberReturned"); w.integer(count)
        w.endObject()
    }

    /// The stations as EDR GeoJSON locations: each with the interval of its observations.
    static func edrLocations(_ w: inout JSONWriter, _ data: EnvironmentalData, locationURL: (String) -> String) {
        w.beginObject()
        w.key("type"); w.string("FeatureCollection")
        w.key("features")
        w.beginArray()
        for place in data.places {
            w.beginObject()
            w.key("type"); w.string("Feature")
            w.key("id"); w.string(place.key)
            w.key("geometry"); pointGeometry(&w, place.position)
            w.key("properties")
            w.beginObject()
            let interval = place.observations.first.map { $0.start.iso + "/" + (place.observations.last?.end.iso ?? "..") } ?? ""
            edrMembers(&w, data, place, datetime: interval, locationURL: locationURL)
            w.endObject()
            w.endObject()
        }
        w.endArray()
        w.key("numberMatched"); w.integer(Int64(data.places.count))
        w.key("numberReturned"); w.integer(Int64(data.places.count))
        w.endObject()
    }

    private static func edrMembers(_ w: inout JSONWriter, _ data: EnvironmentalData, _ place: EnvironmentalData.Station,
                                   datetime: String, locationURL: (String) -> String) {
        w.key("datetime"); w.string(datetime)
        let layer = data.stations.layer
        let label = layer.nameColumns.lazy.compactMap { layer.properties[place.index][$0]?.stringValue }.first ?? place.key
        w.key("label"); w.string(label)
        w.key("parameter-name"); w.beginArray(); for parameter in data.parameters { w.string(parameter) }; w.endArray()
        w.key("edrqueryendpoint"); w.string(locationURL(place.key))
    }

    private static func pointGeometry(_ w: inout JSONWriter, _ p: Point) {
        w.beginObject()
        w.key("type"); w.string("Point")
        w.key("coordinates"); w.beginArray(); w.number(p.lon); w.number(p.lat); w.endArray()
        w.endObject()
    }

    /// The EDR members of a station layer's collection: its queries, its parameters (with units
    /// where declared) and its output formats.
    static func edrCollectionMembers(_ w: inout JSONWriter, _ series: TimeSeries, collectionURL: String) {
        w.key("data_queries")
        w.beginObject()
        for query in ["position", "radius", "area", "locations"] {
            w.key(query)
            w.beginObject()
            w.key("link")
            w.beginObject()
            w.key("href"); w.string(collectionURL + "/" + query)
            w.key("rel"); w.string("data")
            w.key("type"); w.string(coverageJSONType)
            w.key("variables")
            w.beginObject()
            w.key("title"); w.string(query.prefix(1).uppercased() + query.dropFirst() + " query")
            w.key("description"); w.string(EDRUnits.descriptions[query] ?? "")
            w.key("query_type"); w.string(query)
            w.key("output_formats"); w.beginArray(); w.string("CoverageJSON"); w.string("GeoJSON"); w.endArray()
            w.key("default_output_format"); w.string(query == "locations" ? "GeoJSON" : "CoverageJSON")
            w.key("crs_details")
            w.beginArray()
            w.beginObject(); w.key("crs"); w.string("CRS84"); w.key("wkt"); w.string(EDRUnits.crs84WKT); w.endObject()
            w.endArray()
            if query == "radius" { w.key("within_units"); w.beginArray(); for unit in EDRUnits.names { w.string(unit) }; w.endArray() }
            w.endObject()
            w.endObject()
            w.endObject()
        }
        w.endObject()
        w.key("parameter_names")
        w.beginObject()
        for column in series.columns {
            w.key(column)
            w.beginObject()
            w.key("type"); w.string("Parameter")
            w.key("id"); w.string(column)
            w.key("dataType"); w.string("float")
            w.key("observedProperty"); w.beginObject(); w.key("label"); w.string(column); w.endObject()
            if let unit = series.link.units[column] {
                w.key("unit"); w.beginObject(); w.key("symbol"); w.string(unit); w.endObject()
            }
            w.endObject()
        }
        w.endObject()
        w.key("output_formats"); w.beginArray(); w.string("CoverageJSON"); w.string("GeoJSON"); w.endArray()
    }
}

/// `within-units` of a radius query, in metres each.
enum EDRUnits {
    static let metres: [String: Double] = ["m": 1, "km": 1000, "mi": 1609.344]
    static let names = ["km", "m", "mi"]
    static let descriptions = [
        "position": "The observations of the station nearest to each point of coords (a WKT POINT or MULTIPOINT)",
        "radius": "The observations of every station within `within` `within-units` of coords (a WKT POINT)",
        "area": "The observations of every station inside coords (a WKT POLYGON or MULTIPOLYGON)",
        "locations": "The stations, by their codes; /locations/{locationId} the observations of one",
    ]
    static let crs84WKT = #"GEOGCS["WGS 84",DATUM["WGS_1984",SPHEROID["WGS 84",6378137,298.257223563]],PRIMEM["Greenwich",0],UNIT["degree",0.0174532925199433],AXIS["Longitude",EAST],AXIS["Latitude",NORTH]]"#
}
