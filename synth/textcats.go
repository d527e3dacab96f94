package synth

// The paper's text categories (Table 3). Each is a top-level category of
// its own, written to its own pair of files (meta_Electronics.json.gz,
// reviews_Electronics.json.gz) with no image features. Subcategories sit
// one level below the root (Video Games, Movies & TV) or two levels below,
// under a group ("Electronics > Camera & Photo > Tripods"): the depths
// jobs/paper-table4-bow.yaml reads them at.

// textCategory is one Table 3 row and the tree the generator grows for it.
type textCategory struct {
	scale string // the --scale name
	root  string // the category, first element of every path
	file  string // the data set name in the file names
	depth int    // levels from the root to a subcategory: 1 or 2
	// Table 3: subcategories, items, also_bought and also_viewed edges.
	subcats, items, alsoBought, alsoViewed int
	// reviews is the mean number of reviews of an item with reviews: the
	// 2014 release's review count over the distinct items its ratings file
	// names, rounded (Electronics 7,824,482 / 476,002 = 16.4; the counts
	// and their source are in docs/notes/2026-11-25-electronics-end-to-end.md).
	reviews float64
	bases   []textBase
	// qualifiers make further subcategories when bases run short.
	qualifiers []string
}

// textBase is a subcategory name, its group (depth 2 only) and the noun its
// titles and reviews use.
type textBase struct {
	group, name, noun string
}

// textCategories are Table 3's rows in the paper's order.
var textCategories = []textCategory{
	{scale: "elect", root: "Electronics", file: "Electronics", depth: 2,
		subcats: 306, items: 412082, alsoBought: 1654552, alsoViewed: 718361, reviews: 16,
		bases: []textBase{
			{"Computers & Accessories", "Cables", "Cable"},
			{"Computers & Accessories", "Keyboards", "Keyboard"},
			{"Computers & Accessories", "Mice", "Mouse"},
			{"Computers & Accessories", "Monitors", "Monitor"},
			{"Computers & Accessories", "Laptop Bags", "Laptop Bag"},
			{"Computers & Accessories", "External Hard Drives", "Hard Drive"},
			{"Computers & Accessories", "Memory Cards", "Memory Card"},
			{"Computers & Accessories", "Routers", "Router"},
			{"Camera & Photo", "Lenses", "Lens"},
			{"Camera & Photo", "Tripods", "Tripod"},
			{"Camera & Photo", "Camera Bags", "Camera Bag"},
			{"Camera & Photo", "Flashes", "Flash"},
			{"Home Audio", "Speakers", "Speaker"},
			{"Home Audio", "Receivers", "Receiver"},
			{"Portable Audio & Video", "Headphones", "Headphone"},
			{"Portable Audio & Video", "MP3 Players", "Player"},
			{"Car Electronics", "Car Stereos", "Car Stereo"},
			{"Car Electronics", "GPS Units", "GPS Unit"},
			{"Television & Video", "Televisions", "Television"},
			{"Television & Video", "Remote Controls", "Remote"},
			{"Accessories & Supplies", "Batteries", "Battery"},
			{"Accessories & Supplies", "Chargers", "Charger"},
		},
		qualifiers: []string{"Wireless", "Portable", "Professional", "Compact", "Refurbished", "Budget",
			"Premium", "Gaming", "Outdoor", "Travel", "Kids'", "Vintage", "Universal", "Rugged"}},
	{scale: "auto", root: "Automotive", file: "Automotive", depth: 2,
		subcats: 178, items: 312642, alsoBought: 959353, alsoViewed: 1298774, reviews: 4,
		bases: []textBase{
			{"Replacement Parts", "Brake Pads", "Brake Pad"},
			{"Replacement Parts", "Filters", "Filter"},
			{"Replacement Parts", "Spark Plugs", "Spark Plug"},
			{"Interior Accessories", "Floor Mats", "Floor Mat"},
			{"Interior Accessories", "Seat Covers", "Seat Cover"},
			{"Exterior Accessories", "Car Covers", "Car Cover"},
			{"Exterior Accessories", "Wiper Blades", "Wiper Blade"},
			{"Tools & Equipment", "Jacks", "Jack"},
			{"Tools & Equipment", "Wrenches", "Wrench"},
			{"Car Care", "Waxes", "Wax"},
			{"Car Care", "Cleaners", "Cleaner"},
			{"Lights & Lighting Accessories", "Headlights", "Headlight"},
			{"Lights & Lighting Accessories", "Bulbs", "Bulb"},
			{"Tires & Wheels", "Tires", "Tire"},
			{"Tires & Wheels", "Wheels", "Wheel"},
			{"Oils & Fluids", "Motor Oils", "Oil"},
			{"Oils & Fluids", "Coolants", "Coolant"},
		},
		qualifiers: []string{"Heavy-Duty", "Universal", "Performance", "Truck", "Motorcycle", "RV",
			"Premium", "Economy", "Racing", "Classic Car"}},
	{scale: "games", root: "Video Games", file: "Video_Games", depth: 1,
		subcats: 16, items: 49801, alsoBought: 314124, alsoViewed: 54559, reviews: 26,
		bases: []textBase{
			{"", "PlayStation 4", "Game"}, {"", "PlayStation 3", "Game"}, {"", "PlayStation 2", "Game"},
			{"", "Xbox One", "Game"}, {"", "Xbox 360", "Game"}, {"", "Xbox", "Game"},
			{"", "Nintendo 3DS", "Game"}, {"", "Nintendo DS", "Game"}, {"", "Wii U", "Game"},
			{"", "Wii", "Game"}, {"", "GameCube", "Game"}, {"", "PC", "Game"}, {"", "Mac", "Game"},
			{"", "Sony PSP", "Game"}, {"", "PlayStation Vita", "Game"}, {"", "More Systems", "Controller"},
		}},
	{scale: "movies", root: "Movies & TV", file: "Movies_and_TV", depth: 1,
		subcats: 2, items: 199737, alsoBought: 648256, alsoViewed: 49924, reviews: 23,
		bases: []textBase{{"", "Movies", "Movie"}, {"", "TV", "Season"}}},
	{scale: "office", root: "Office Products", file: "Office_Products", depth: 2,
		subcats: 245, items: 127054, alsoBought: 448720, alsoViewed: 370630, reviews: 10,
		bases: []textBase{
			{"Office & School Supplies", "Pens", "Pen"},
			{"Office & School Supplies", "Pencils", "Pencil"},
			{"Office & School Supplies", "Notebooks", "Notebook"},
			{"Office & School Supplies", "Binders", "Binder"},
			{"Office & School Supplies", "Staplers", "Stapler"},
			{"Office & School Supplies", "Paper", "Paper Ream"},
			{"Office & School Supplies", "Envelopes", "Envelope"},
			{"Office & School Supplies", "Labels", "Label"},
			{"Office & School Supplies", "Calendars", "Calendar"},
			{"Office & School Supplies", "Folders", "Folder"},
			{"Office & School Supplies", "Tape", "Tape"},
			{"Office & School Supplies", "Scissors", "Scissors"},
			{"Office Electronics", "Printers", "Printer"},
			{"Office Electronics", "Ink Cartridges", "Ink Cartridge"},
			{"Office Electronics", "Calculators", "Calculator"},
			{"Office Electronics", "Shredders", "Shredder"},
			{"Office Furniture & Lighting", "Desks", "Desk"},
			{"Office Furniture & Lighting", "Chairs", "Chair"},
			{"Office Furniture & Lighting", "Desk Lamps", "Desk Lamp"},
			{"Office Furniture & Lighting", "Filing Cabinets", "Filing Cabinet"},
		},
		qualifiers: []string{"Recycled", "Heavy-Duty", "Colored", "Refillable", "Executive", "Student",
			"Wireless", "Compact", "Premium", "Bulk", "Teachers'", "Ergonomic"}},
	{scale: "home", root: "Home & Kitchen", file: "Home_and_Kitchen", depth: 2,
		subcats: 81, items: 393781, alsoBought: 560574, alsoViewed: 960925, reviews: 10,
		bases: []textBase{
			{"Kitchen & Dining", "Cookware", "Pan"},
			{"Kitchen & Dining", "Knives", "Knife"},
			{"Kitchen & Dining", "Blenders", "Blender"},
			{"Kitchen & Dining", "Coffee Makers", "Coffee Maker"},
			{"Kitchen & Dining", "Dinnerware", "Plate"},
			{"Bedding", "Sheets", "Sheet Set"},
			{"Bedding", "Pillows", "Pillow"},
			{"Bedding", "Blankets", "Blanket"},
			{"Bath", "Towels", "Towel"},
			{"Bath", "Shower Curtains", "Shower Curtain"},
			{"Furniture", "Sofas", "Sofa"},
			{"Furniture", "Tables", "Table"},
			{"Home D\u00e9cor", "Rugs", "Rug"},
			{"Home D\u00e9cor", "Lamps", "Lamp"},
			{"Vacuums & Floor Care", "Vacuums", "Vacuum"},
			{"Storage & Organization", "Storage Bins", "Storage Bin"},
		},
		qualifiers: []string{"Outdoor", "Kids'", "Vintage", "Modern", "Travel"}},
	{scale: "phones", root: "Cell Phones & Accessories", file: "Cell_Phones_and_Accessories", depth: 2,
		subcats: 28, items: 317965, alsoBought: 867418, alsoViewed: 225785, reviews: 11,
		bases: []textBase{
			{"Accessories", "Cases", "Case"},
			{"Accessories", "Screen Protectors", "Screen Protector"},
			{"Accessories", "Chargers", "Charger"},
			{"Accessories", "Cables", "Cable"},
			{"Accessories", "Headsets", "Headset"},
			{"Accessories", "Car Accessories", "Car Mount"},
			{"Accessories", "Batteries", "Battery"},
			{"Accessories", "Styluses", "Stylus"},
			{"Accessories", "Armbands", "Armband"},
			{"Accessories", "Replacement Parts", "Replacement Part"},
			{"Cell Phones", "Unlocked Cell Phones", "Phone"},
			{"Cell Phones", "Carrier Cell Phones", "Phone"},
		},
		qualifiers: []string{"Wireless", "Rugged"}},
}

// textCategoryOf returns the text category whose root is name, or nil.
func textCategoryOf(name string) *textCategory {
	for i := range textCategories {
		if textCategories[i].root == name {
			return &textCategories[i]
		}
	}
	return nil
}

// textSubcats names the first n subcategories of a text category: the bases,
// then qualified variants ("Wireless Headphones") under the base's group.
func textSubcats(tc *textCategory, n int) []Subcat {
	out := make([]Subcat, 0, n)
	add := func(q string, b textBase) {
		name := b.name
		if q != "" {
			name = q + " " + b.name
		}
		out = append(out, Subcat{Name: name, group: b.group, noun: b.noun})
	}
	for _, q := range append([]string{""}, tc.qualifiers...) {
		for _, b := range tc.bases {
			if len(out) == n {
				return out
			}
			add(q, b)
		}
	}
	return out
}

// textConfig is the Config of one text category at full size.
func textConfig(tc *textCategory) Config {
	items := float64(tc.items)
	return Config{
		Scale: tc.scale,
		Name:  tc.file,
		Tops: []Top{{Name: tc.root, Subcats: tc.subcats, Items: tc.items,
			AlsoBought: float64(tc.alsoBought) / items, AlsoViewed: float64(tc.alsoViewed) / items}},
		ReviewsMean: tc.reviews,
		// About a sixth of a 2014 category file's items have no review
		// (Electronics: 498,196 metadata lines, 412,082 items in Table 3).
		NoImageFrac: 0.17,
		// A category file holds that category's items only.
		ForeignFrac: -1,
	}
}

// textCat returns the text category a resolved, validated config is of, or
// nil for a clothing world.
func (c Config) textCat() *textCategory {
	if len(c.Tops) != 1 {
		return nil
	}
	return textCategoryOf(c.Tops[0].Name)
}
