# The few lexbor structures the compiled walk reads, declared by warclake from lexbor's
# documented memory layout (lexbor 2.x as built into the pinned selectolax). Only field
# order and types matter: Cython emits these as its own C structs, no lexbor header is
# included. The import-time self-check (warclake.tasks.native) reads each field the walk
# uses on a fixed page and compares it with selectolax's own API (which is built against
# lexbor's headers), naming the first field that differs, then compares the walk with the
# Python one: a selectolax whose lexbor layout differs is caught before any page is read.


cdef struct lx_str:                 # lexbor_str_t
    unsigned char *data
    size_t length


cdef struct lx_node:                # lxb_dom_node_t
    void *events                    # lxb_dom_event_target_t
    uintptr_t local_name            # tag id of an element, attribute id of an attribute
    uintptr_t prefix
    uintptr_t ns
    void *owner_document
    lx_node *next
    lx_node *prev
    lx_node *parent
    lx_node *first_child
    lx_node *last_child
    void *user
    int type                        # lxb_dom_node_type_t


cdef struct lx_attr:                # lxb_dom_attr_t
    lx_node node
    uintptr_t upper_name
    uintptr_t qualified_name        # 0 unless the written name differs from local_name
    lx_str *value                   # NULL for an attribute without a value
    void *owner
    lx_attr *next
    lx_attr *prev


cdef struct lx_element:             # lxb_dom_element_t (leading fields only)
    lx_node node
    uintptr_t upper_name
    uintptr_t qualified_name
    lx_str *is_value
    lx_attr *first_attr
    lx_attr *last_attr


cdef struct lx_character_data:      # lxb_dom_character_data_t (text and comment nodes)
    lx_node node
    lx_str data


cdef union lx_hash_name:            # the name union of lexbor_hash_entry_t
    unsigned char *long_str
    unsigned char short_str[17]     # names of up to 16 bytes are stored inline


cdef struct lx_tag_data:            # lxb_tag_data_t; a tag id above the static table is its address
    lx_hash_name u
    size_t length
    void *next
    uintptr_t tag_id

# Ids below this are indexes into lexbor's static tables; larger ones are addresses of
# per-document entries (no heap address is this low).
cdef enum:
    STATIC_ID_LIMIT = 65536
