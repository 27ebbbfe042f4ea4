int aq_probe_placeholder;
