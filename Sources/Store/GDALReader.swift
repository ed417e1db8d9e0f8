// GDAL/OGR as the reader for every vector format it knows (Shapefile with its .prj and .cpg,
// GeoPackages written by any tool, FlatGeobuf, GPX, KML, GML, …). Nothing of these formats is
// written by hand here: GDAL opens the file, decodes the text encoding (a Shapefile's .cpg),
// and hands over each feature's geometry as ISO WKB and its fields by type. The records then
// go through the same validation as every other format (reprojection with PROJ, ranges, GEOS
// validity, all-or-nothing), with problems named by feature index and fid.

import CGDAL
import Foundation
import Geometry

/// GDAL's drivers are registered once per process; the registry is global and thread-safe
/// after that.
enum GDALLibrary {
    static let registered: Void = {
        GDALAllRegister()
        // Errors come back through return values and CPLGetLastErrorMsg, not on stderr.
        CPLSetErrorHandler(CPLQuietErrorHandler)
    }()

    /// The short name of the driver GDAL would open the file with, and whether it is a vector
    /// driver; nil when no driver recognises the file.
    static func identify(_ path: String) -> (driver: String, longName: String, isVector: Bool)? {
        _ = registered
        guard let driver = GDALIdentifyDriverEx(path, UInt32(GDAL_OF_VECTOR | GDAL_OF_RASTER), nil, nil) else { return nil }
        let name = GDALGetDriverShortName(driver).map { String(cString: $0) } ?? "?"
        let longName = GDALGetDriverLongName(driver).map { String(cString: $0) } ?? name
        let isVector = GDALGetMetadataItem(driver, GDAL_DCAP_VECTOR, nil) != nil
        return (name, longName, isVector)
    }

    static var lastError: String {
        let message = CPLGetLastErrorMsg().map { String(cString: $0) } ?? ""
        return message.isEmpty ? "unknown GDAL error" : message
    }
}

extension ImportFormat {
    /// A format GDAL reads: recognised when GDAL's own identification picks one of `drivers`
    /// (nil: any vector driver GDAL has, except those the store reads natively).
    static func gdal(name: String, drivers: Set<String>?) -> ImportFormat {
        ImportFormat(name: name, recognise: { source in
            guard let identified = source.gdalDriver, identified.isVector else { return nil }
            if let drivers { return drivers.contains(identified.driver) ? .byContent : nil }
            return nativeDrivers.contains(identified.driver) ? nil : .byContent
        }, stream: { source, options, sink throws(StoreError) in
            try Importer.readWithGDAL(source, drivers: drivers, options: options, into: sink)
        })
    }

    /// Drivers the generic `gdal` format leaves alone: GeoJSON and CSV, which the store reads
    /// itself (streaming, with per-feature errors; GDAL's readers only with `--format gdal`),
    /// and OSM, whose ways are a walking network rather than one layer.
    static let nativeDrivers: Set<String> = ["GeoJSON", "GeoJSONSeq", "CSV", "OSM"]

    public static let shapefile = gdal(name: "shapefile", drivers: ["ESRI Shapefile"])
    public static let gpkg = gdal(name: "gpkg", drivers: ["GPKG"])
    public static let flatgeobuf = gdal(name: "flatgeobuf", drivers: ["FlatGeobuf"])
    public static let gpx = gdal(name: "gpx", drivers: ["GPX"])
    public static let kml = gdal(name: "kml", drivers: ["KML", "LIBKML"])
    public static let gml = gdal(name: "gml", drivers: ["GML"])
    /// Any other vector format GDAL reads (MapInfo, DXF, ODS/XLSX, …).
    public static let anyGDAL = gdal(name: "gdal", drivers: nil)
}

extension Importer {
    /// Reads one layer of a file through OGR, feature by feature into the sink. A file with
    /// several non-empty layers needs `--source-layer`; the error lists them.
    static func readWithGDAL(_ source: ImportSource, drivers: Set<String>?, options: ImportOptions, into sink: ImportSink) throws(StoreError) {
        _ = GDALLibrary.registered
        let file = source.file
        func failure(_ message: String) -> StoreError {
            .importFailed(file: file, problems: [ImportProblem(location: "", message: message)])
        }
        // Restrict opening to the chosen drivers, so `--format gpx` never reads a file as CSV.
        var allowed: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
        for driver in drivers ?? [] { allowed = CSLAddString(allowed, driver) }
        defer { CSLDestroy(allowed) }
        let list = allowed.map { UnsafeRawPointer($0).assumingMemoryBound(to: UnsafePointer<CChar>?.self) }
        let dataset = GDALOpenEx(source.path, UInt32(GDAL_OF_VECTOR | GDAL_OF_READONLY), list, nil, nil)
        guard let dataset else { throw failure("GDAL cannot open the file: \(GDALLibrary.lastError)") }
        defer { GDALClose(dataset) }

        if let missing = missingCompanion(dataset, path: source.path) { throw failure(missing) }
        let layer = try chooseLayer(dataset, sourceLayer: options.sourceLayer, file: file)
        let crs = layerCRS(layer)
        let fidColumn = OGR_L_GetFIDColumn(layer).map { String(cString: $0) } ?? ""

        guard let definition = OGR_L_GetLayerDefn(layer) else { throw failure("the layer has no definition") }
        let fieldCount = Int(OGR_FD_GetFieldCount(definition))
        var fields: [FieldInfo] = []
        for index in 0..<fieldCount {
            guard let field = OGR_FD_GetFieldDefn(definition, Int32(index)) else { continue }
            fields.append(FieldInfo(name: OGR_Fld_GetNameRef(field).map { String(cString: $0) } ?? "field_\(index)",
                                    type: OGR_Fld_GetType(field), subType: OGR_Fld_GetSubType(field)))
        }
        // A real fid column (GeoPackage, SQLite) keeps its ids; a Shapefile's record numbers
        // are no ids.
        let keepFIDs = !fidColumn.isEmpty
        let declared = options.crs ?? crs
        sink.header(ImportHeader(kind: .features, sourceCRS: declared ?? "EPSG:4326", crsAssumed: declared == nil))

        var wkb: [UInt8] = []
        var index = 0
        OGR_L_ResetReading(layer)
        while !sink.cancelled {
            // NULL is both the end of the layer and a failed read: only GDAL's error state
            // (per thread, cleared before each read) tells them apart. A FlatGeobuf cut short
            // ended here after 2 of its 57 features as if it were complete.
            CPLErrorReset()
            guard let handle = OGR_L_GetNextFeature(layer) else {
                let type = CPLGetLastErrorType()
                if type == CE_Failure || type == CE_Fatal {
                    throw failure("GDAL could not read feature \(index) (the file may be cut short or damaged): \(GDALLibrary.lastError)")
                }
                break
            }
            defer {
                OGR_F_Destroy(handle)
                index += 1
            }
            let fid = OGR_F_GetFID(handle)
            let location = "feature \(index)" + (fid >= 0 ? " (fid \(fid))" : "")
            var geometry: Geometry?
            if let ogrGeometry = OGR_F_GetGeometryRef(handle), OGR_G_IsEmpty(ogrGeometry) == 0 {
                do throws(StoreError) {
                    geometry = try decode(ogrGeometry, buffer: &wkb)
                } catch {
                    if case .corruptGeometry(let reason) = error { sink.problem(ImportProblem(location: location, message: reason)) }
                    continue
                }
            }
            var properties = Attributes()
            for (column, field) in fields.enumerated() {
                properties[field.name] = value(of: handle, Int32(column), field.type, field.subType)
            }
            let id: FeatureID? = !keepFIDs || fid < 0 ? nil : .integer(Int64(fid))
            sink.record(Feature(id: id, geometry: geometry, properties: properties))
        }
    }

    /// Why a Shapefile cannot be read whole, or nil: GDAL opens a `.shp` whose `.dbf` is
    /// missing without a word and reads geometry alone, so every attribute would be lost in
    /// silence. The files GDAL uses are its own list, whatever the extensions' case.
    static func missingCompanion(_ dataset: GDALDatasetH, path: String) -> String? {
        guard let driver = GDALGetDatasetDriver(dataset), GDALGetDriverShortName(driver).map({ String(cString: $0) }) == "ESRI Shapefile",
              path.lowercased().hasSuffix(".shp") else { return nil }
        let files = GDALGetFileList(dataset)
        defer { CSLDestroy(files) }
        var index = 0
        while let entry = files?[index] {
            if String(cString: entry).lowercased().hasSuffix(".dbf") { return nil }
            index += 1
        }
        let dbf = ((path as NSString).lastPathComponent as NSString).deletingPathExtension + ".dbf"
        return "the Shapefile has no \(dbf) beside it, which holds its attributes: without it only the geometries could be read"
    }

    struct FieldInfo: Sendable {
        let name: String
        let type: OGRFieldType
        let subType: OGRFieldSubType
    }

    /// The one layer to read: the named one, the only one, or the only non-empty one (GPX
    /// files have five layers, usually one with features).
    static func chooseLayer(_ dataset: GDALDatasetH, sourceLayer: String?, file: String) throws(StoreError) -> OGRLayerH {
        var layers: [(name: String, handle: OGRLayerH, count: Int64, type: String)] = []
        for index in 0..<GDALDatasetGetLayerCount(dataset) {
            guard let layer = GDALDatasetGetLayer(dataset, index) else { continue }
            let name = OGR_L_GetName(layer).map { String(cString: $0) } ?? "layer \(index)"
            let type = OGRGeometryTypeToName(OGR_L_GetGeomType(layer)).map { String(cString: $0) } ?? "?"
            layers.append((name, layer, Int64(OGR_L_GetFeatureCount(layer, 1)), type))
        }
        let listing = layers.map { "\($0.name) (\($0.type), \($0.count) features)" }.joined(separator: ", ")
        if let sourceLayer {
            guard let layer = layers.first(where: { $0.name == sourceLayer }) ?? layers.first(where: { $0.name.lowercased() == sourceLayer.lowercased() }) else {
                throw .importFailed(file: file, problems: [ImportProblem(location: "", message: "no layer '\(sourceLayer)' in the file; its layers: \(listing)")])
            }
            return layer.handle
        }
        if layers.count == 1 { return layers[0].handle }
        let nonEmpty = layers.filter { $0.count != 0 }
        if nonEmpty.count == 1 { return nonEmpty[0].handle }
        let message = layers.isEmpty ? "the file has no layers" : "the file has \(layers.count) layers; choose one with --source-layer: \(listing)"
        throw .importFailed(file: file, problems: [ImportProblem(location: "", message: message)])
    }

    /// "EPSG:N" when GDAL can name the layer's CRS by an EPSG code (a Shapefile's .prj is
    /// ESRI WKT without codes: matched against PROJ's database), else its WKT; nil without one.
    static func layerCRS(_ layer: OGRLayerH) -> String? {
        guard let reference = OGR_L_GetSpatialRef(layer) else { return nil }
        if let code = epsgCode(reference) { return "EPSG:\(code)" }
        var count: Int32 = 0
        var confidences: UnsafeMutablePointer<Int32>?
        if let matches = OSRFindMatches(reference, nil, &count, &confidences) {
            defer {
                OSRFreeSRSArray(matches)
                VSIFree(confidences)
            }
            if count > 0, let best = matches[0], let confidences, confidences[0] >= 70, let code = epsgCode(best) { return "EPSG:\(code)" }
        }
        var wkt: UnsafeMutablePointer<CChar>?
        guard OSRExportToWkt(reference, &wkt) == OGRERR_NONE, let wkt else { return nil }
        defer { VSIFree(wkt) }
        return String(cString: wkt)
    }

    static func epsgCode(_ reference: OGRSpatialReferenceH) -> String? {
        let target: String? = OSRIsProjected(reference) != 0 ? "PROJCS" : OSRIsGeographic(reference) != 0 ? "GEOGCS" : nil
        guard let authority = OSRGetAuthorityName(reference, target), String(cString: authority) == "EPSG",
              let code = OSRGetAuthorityCode(reference, target) else { return nil }
        return String(cString: code)
    }

    /// 2D ISO WKB of the feature's geometry (curves made linear, Z and M dropped), decoded by
    /// the package's own WKB reader, which refuses non-finite coordinates.
    static func decode(_ ogrGeometry: OGRGeometryH, buffer: inout [UInt8]) throws(StoreError) -> Geometry? {
        var geometry = ogrGeometry
        var linear: OGRGeometryH?
        defer { if let linear { OGR_G_DestroyGeometry(linear) } }
        if OGR_GT_IsNonLinear(OGR_G_GetGeometryType(geometry)) != 0 {
            guard let made = OGR_G_GetLinearGeometry(geometry, 0, nil) else { throw .corruptGeometry("cannot make the curve geometry linear") }
            linear = made
            geometry = made
        }
        OGR_G_FlattenTo2D(geometry)
        let size = Int(OGR_G_WkbSize(geometry))
        if buffer.count < size { buffer = [UInt8](repeating: 0, count: size) }
        let exported = buffer.withUnsafeMutableBufferPointer { OGR_G_ExportToIsoWkb(geometry, wkbNDR, $0.baseAddress) }
        guard exported == OGRERR_NONE else { throw .corruptGeometry("GDAL cannot write the geometry as WKB") }
        do {
            return try WKB.decodeAllowingEmpty(Array(buffer[0..<size]))
        } catch {
            throw .corruptGeometry(error.description)
        }
    }

    static func value(of feature: OGRFeatureH, _ index: Int32, _ type: OGRFieldType, _ subType: OGRFieldSubType) -> AttributeValue {
        guard OGR_F_IsFieldSetAndNotNull(feature, index) != 0 else { return .null }
        switch type {
        case OFTInteger:
            let number = OGR_F_GetFieldAsInteger(feature, index)
            return subType == OFSTBoolean ? .bool(number != 0) : .integer(Int64(number))
        case OFTInteger64:
            return .integer(Int64(OGR_F_GetFieldAsInteger64(feature, index)))
        case OFTReal:
            let number = OGR_F_GetFieldAsDouble(feature, index)
            // SQLite would store NaN as NULL and JSON has no infinity: keep the text instead.
            return number.isFinite ? .real(number) : .text(String(number))
        default:
            // Text, dates (as GDAL writes them, ISO 8601), lists: GDAL's text form, UTF-8.
            return .text(OGR_F_GetFieldAsString(feature, index).map { String(cString: $0) } ?? "")
        }
    }
}
