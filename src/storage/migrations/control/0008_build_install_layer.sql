-- The install layer (package cache, installs/<key>) a build's node_modules was linked from
-- or saved as: a layer no kept build names is removed with the builds (decision 0051).
-- NULL for builds without one, and for builds made before this column.
ALTER TABLE builds ADD COLUMN install_layer text;
