// The one ES module the console imports its graph libraries from (build.sh bundles it).
export { default as Graph } from "graphology";
export { default as forceAtlas2 } from "graphology-layout-forceatlas2";
export { default as Sigma } from "sigma";
export { drawDiscNodeHover, drawDiscNodeLabel, drawStraightEdgeLabel } from "sigma/rendering";
