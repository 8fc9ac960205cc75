// placeholder until end-to-end tests land
