SELECT name, value, detail FROM stats WHERE name LIKE 'import_cpu%' ORDER BY name;
